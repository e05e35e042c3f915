#pragma once
// Runs a parsed program against a render context: statements in evaluator.cpp, expressions in
// expression_eval.cpp. One evaluator serves one render and is then dropped.
//
// Scoping follows Jinja (Python's, where @huggingface/jinja differs): each iteration of a for
// loop and each macro call gets a fresh frame, so `set` inside them does not leak out, not even
// into the next iteration (hence namespace()); `if` blocks share their enclosing frame. A macro
// sees its parameters, the template's top level, the context and the globals, not the frames of
// whoever called it.
//
// Errors: built-ins throw template_error without a line; eval() and exec() add the line of
// the innermost node that was running.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "text/jinja/ast.hpp"
#include "text/jinja/call_args.hpp"
#include "text/jinja/render_options.hpp"
#include "text/jinja/render_state.hpp"
#include "text/jinja/value.hpp"

namespace courier::text::jinja {

class evaluator {
 public:
  // `context` must be a mapping; `prog` and `options` are borrowed for the evaluator's life.
  evaluator(const program& prog, value context, const render_options& options);
  std::string run();

 private:
  enum class flow { normal, break_loop, continue_loop };
  using frame = std::vector<std::pair<std::string, value>>;

  // Statements (evaluator.cpp).
  flow exec_list(const stmt_list& body, std::string& out);
  flow exec(const stmt& s, std::string& out);
  flow exec_node(const stmt& s, std::string& out);
  flow exec_for(const stmt& s, std::string& out);
  void exec_set(const stmt& s, value v);
  value call_macro(const stmt& macro, const call_args& args);
  void bind_targets(const std::vector<std::string>& targets, const value& item);
  void emit(std::string& out, std::string_view text);

  // Expressions (expression_eval.cpp).
  value eval(const expr& e);
  value eval_node(const expr& e);
  value eval_call(const expr& e);
  value apply_filter(const expr& filter, value input);
  value apply_filter_chain(const expr& chain, value input);
  bool eval_test(const expr& e);
  call_args eval_args(const expr& e, std::size_t first);

  // Variables.
  value lookup(std::string_view name) const;
  void assign(const std::string& name, value v);

  // Bounds the recursion of eval/exec (and so macro recursion) by render_options::max_depth.
  class depth_guard {
   public:
    explicit depth_guard(evaluator& ev);
    ~depth_guard() { --ev_.depth_; }
    depth_guard(const depth_guard&) = delete;
    depth_guard& operator=(const depth_guard&) = delete;

   private:
    evaluator& ev_;
  };

  // Pushes a frame for its lifetime; with `isolate`, lookups skip the frames below it (a
  // macro call).
  class frame_scope {
   public:
    frame_scope(evaluator& ev, bool isolate);
    ~frame_scope();
    frame_scope(const frame_scope&) = delete;
    frame_scope& operator=(const frame_scope&) = delete;

   private:
    evaluator& ev_;
    std::size_t saved_floor_;
  };

  const program& program_;
  value context_;  // a mapping
  render_state state_;
  // frames_[0] is the template's top level. Invariant: floor_ < frames_.size().
  std::vector<frame> frames_;
  std::size_t floor_ = 0;  // the lowest frame a lookup visits before frames_[0]
  int depth_ = 0;
};

}  // namespace courier::text::jinja
