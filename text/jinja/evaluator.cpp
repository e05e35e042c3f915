// The statement half of the evaluator.
#include "text/jinja/evaluator.hpp"

#include "text/jinja/access.hpp"
#include "text/jinja/globals.hpp"
#include "text/jinja/operators.hpp"
#include "text/jinja/template_error.hpp"

namespace courier::text::jinja {

namespace {

// Building `loop` costs about as much as this many plain steps.
constexpr std::uint64_t loop_object_steps = 8;

// What `loop` holds in iteration `i` of a loop over `items`.
value loop_object(const std::vector<value>& items, std::size_t i) {
  const auto n = static_cast<std::int64_t>(items.size());
  const auto k = static_cast<std::int64_t>(i);
  object_data loop;
  loop.reserve(12);
  loop.append("index", value(k + 1));
  loop.append("index0", value(k));
  loop.append("revindex", value(n - k));
  loop.append("revindex0", value(n - k - 1));
  loop.append("first", value(k == 0));
  loop.append("last", value(k == n - 1));
  loop.append("length", value(n));
  loop.append("depth", value(1));
  loop.append("depth0", value(0));
  loop.append("previtem", k > 0 ? items[i - 1] : value());
  loop.append("nextitem", k + 1 < n ? items[i + 1] : value());
  loop.append("cycle", value::function("cycle", [i](const call_args& a, render_state&) {
                if (!a.keyword.empty() || a.positional.empty()) {
                  throw template_error("loop.cycle needs at least one positional argument");
                }
                return a.positional[i % a.positional.size()];
              }));
  return value::object(std::move(loop));
}

}  // namespace

evaluator::evaluator(const program& prog, value context, const render_options& options)
    : program_(prog), context_(std::move(context)), state_(options) {}

std::string evaluator::run() {
  frames_.clear();
  frames_.emplace_back();
  std::string out;
  exec_list(program_.body, out);
  return out;
}

evaluator::depth_guard::depth_guard(evaluator& ev) : ev_(ev) {
  if (++ev_.depth_ > ev_.state_.options().max_depth) {
    --ev_.depth_;
    throw template_error("evaluation nested deeper than " +
                         std::to_string(ev_.state_.options().max_depth) +
                         " levels (runaway macro recursion?)");
  }
}

evaluator::frame_scope::frame_scope(evaluator& ev, bool isolate)
    : ev_(ev), saved_floor_(ev.floor_) {
  ev_.frames_.emplace_back();
  if (isolate) ev_.floor_ = ev_.frames_.size() - 1;
}

evaluator::frame_scope::~frame_scope() {
  ev_.floor_ = saved_floor_;
  ev_.frames_.pop_back();
}

evaluator::flow evaluator::exec_list(const stmt_list& body, std::string& out) {
  for (const auto& s : body) {
    const flow f = exec(*s, out);
    if (f != flow::normal) return f;
  }
  return flow::normal;
}

evaluator::flow evaluator::exec(const stmt& s, std::string& out) {
  try {
    depth_guard guard(*this);
    state_.step();
    return exec_node(s, out);
  } catch (const template_error& e) {
    if (e.line() != 0) throw;
    throw template_error(e.message(), s.line);
  }
}

evaluator::flow evaluator::exec_node(const stmt& s, std::string& out) {
  switch (s.kind) {
    case stmt_kind::text:
      emit(out, s.text);
      break;
    case stmt_kind::output:
      emit(out, to_text(eval(*s.value), state_.options().max_output_bytes));
      break;
    case stmt_kind::if_:
      for (const auto& branch : s.branches) {
        if (truthy(eval(*branch.condition))) return exec_list(branch.body, out);
      }
      return exec_list(s.else_body, out);
    case stmt_kind::for_:
      return exec_for(s, out);
    case stmt_kind::set:
      exec_set(s, eval(*s.value));
      break;
    case stmt_kind::set_block: {
      std::string body;
      const flow f = exec_list(s.body, body);
      exec_set(s, s.value ? apply_filter_chain(*s.value, value(std::move(body)))
                          : value(std::move(body)));
      return f;
    }
    case stmt_kind::macro: {
      const stmt* macro = &s;
      assign(s.text, value::function(s.text, [this, macro](const call_args& a, render_state&) {
               return call_macro(*macro, a);
             }));
      break;
    }
    case stmt_kind::filter_block: {
      std::string body;
      const flow f = exec_list(s.body, body);
      emit(out, to_text(apply_filter_chain(*s.value, value(std::move(body))),
                        state_.options().max_output_bytes));
      return f;
    }
    case stmt_kind::break_:
      return flow::break_loop;
    case stmt_kind::continue_:
      return flow::continue_loop;
    case stmt_kind::block:
      return exec_list(s.body, out);
  }
  return flow::normal;
}

evaluator::flow evaluator::exec_for(const stmt& s, std::string& out) {
  std::vector<value> items = items_of(eval(*s.value), "for", state_);
  {
    frame_scope scope(*this, false);
    if (s.condition) {
      // The filter runs before the loop, so loop.length and loop.last count kept items only.
      std::vector<value> kept;
      for (const value& item : items) {
        bind_targets(s.targets, item);
        if (truthy(eval(*s.condition))) kept.push_back(item);
      }
      items = std::move(kept);
    }
    for (std::size_t i = 0; i < items.size(); ++i) {
      // Each iteration starts afresh, as in Jinja: what one assigned, the next cannot see.
      frames_.back().clear();
      bind_targets(s.targets, items[i]);
      if (s.uses_loop) {
        state_.step(loop_object_steps);
        assign("loop", loop_object(items, i));
      }
      if (exec_list(s.body, out) == flow::break_loop) break;
    }
  }
  return items.empty() ? exec_list(s.else_body, out) : flow::normal;
}

void evaluator::bind_targets(const std::vector<std::string>& targets, const value& item) {
  if (targets.size() == 1) {
    assign(targets[0], item);
    return;
  }
  if (!item.is_array()) {
    throw template_error(std::string("cannot unpack ") + type_name(item) + " into " +
                         std::to_string(targets.size()) + " variables");
  }
  if (item.as_array().size() != targets.size()) {
    throw template_error("expected " + std::to_string(targets.size()) + " values to unpack, got " +
                         std::to_string(item.as_array().size()));
  }
  for (std::size_t i = 0; i < targets.size(); ++i) assign(targets[i], item.as_array()[i]);
}

void evaluator::exec_set(const stmt& s, value v) {
  if (s.attr.empty()) {
    bind_targets(s.targets, v);
    return;
  }
  const value ns = lookup(s.targets[0]);
  if (!ns.is_namespace()) {
    throw template_error("cannot set attribute '" + s.attr + "' of " + type_name(ns) + " '" +
                         s.targets[0] + "': only a namespace() takes attribute assignments");
  }
  if (v.depth() >= max_value_depth) throw template_error("value nested too deeply");
  ns.as_object().set(s.attr, std::move(v));
}

value evaluator::call_macro(const stmt& macro, const call_args& args) {
  if (args.positional.size() > macro.params.size()) {
    throw template_error("macro '" + macro.text + "' takes " + std::to_string(macro.params.size()) +
                         " argument(s), got " + std::to_string(args.positional.size()));
  }
  for (const auto& [name, v] : args.keyword) {
    bool known = false;
    for (const auto& p : macro.params) known = known || p.name == name;
    if (!known) {
      throw template_error("macro '" + macro.text + "' has no parameter '" + name + "'");
    }
  }
  frame_scope scope(*this, true);
  for (std::size_t i = 0; i < macro.params.size(); ++i) {
    const macro_param& p = macro.params[i];
    const value* given = args.find(i, p.name);
    // A default may use the parameters before it, so it is evaluated in the macro's frame.
    assign(p.name, given != nullptr ? *given : p.default_value ? eval(*p.default_value) : value());
  }
  std::string out;
  exec_list(macro.body, out);
  return value(std::move(out));
}

void evaluator::emit(std::string& out, std::string_view text) {
  const std::size_t limit = state_.options().max_output_bytes;
  if (text.size() > limit || out.size() > limit - text.size()) {
    throw template_error("output longer than the limit of " + std::to_string(limit) + " bytes");
  }
  state_.charge_text(text.size());
  out.append(text);
}

value evaluator::lookup(std::string_view name) const {
  auto find = [name](const frame& f) -> const value* {
    for (const auto& [key, v] : f) {
      if (key == name) return &v;
    }
    return nullptr;
  };
  for (std::size_t i = frames_.size(); i-- > floor_;) {
    if (const value* v = find(frames_[i])) return *v;
  }
  if (floor_ > 0) {
    if (const value* v = find(frames_[0])) return *v;
  }
  if (const value* v = context_.as_object().find(name)) return *v;
  if (const value* v = find_global(name)) return *v;
  return value();
}

void evaluator::assign(const std::string& name, value v) {
  frame& f = frames_.back();
  for (auto& [key, slot] : f) {
    if (key == name) {
      slot = std::move(v);
      return;
    }
  }
  f.emplace_back(name, std::move(v));
}

}  // namespace courier::text::jinja
