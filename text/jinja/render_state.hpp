#pragma once
// What one render carries besides its variables: the work counters that enforce
// render_options, and every namespace the template created, which are emptied when the render
// ends so that a cycle built through one (`{% set ns.self = ns %}`) cannot leak.
#include <cstdint>
#include <ctime>
#include <vector>

#include "text/jinja/render_options.hpp"
#include "text/jinja/value.hpp"

namespace courier::text::jinja {

class render_state {
 public:
  explicit render_state(const render_options& options);
  ~render_state();
  render_state(const render_state&) = delete;
  render_state& operator=(const render_state&) = delete;

  // Counts `n` steps; throws template_error once past max_steps.
  void step(std::uint64_t n = 1) {
    if (n > options_.max_steps - steps_) steps_exceeded();  // steps_ <= max_steps always
    steps_ += n;
  }
  // Counts building a string of `size_bytes`; throws if it is longer than max_output_bytes.
  void charge_text(std::size_t size_bytes);

  value make_namespace(object_data contents);
  std::time_t now() const;
  const render_options& options() const { return options_; }

 private:
  [[noreturn]] void steps_exceeded() const;

  const render_options& options_;  // Borrowed from the caller of render, which outlives this.
  std::uint64_t steps_ = 0;
  std::vector<value> namespaces_;
};

}  // namespace courier::text::jinja
