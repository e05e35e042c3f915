#pragma once
// What one render carries besides its variables: the work counters that enforce
// render_options, and every namespace the template created, which are emptied when the render
// ends so that a cycle built through one (`{% set ns.self = ns %}`) cannot leak.
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string>
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
  // Counts building a string of `size_bytes` (one step per 32 bytes); throws if it is longer
  // than max_output_bytes.
  void charge_text(std::size_t size_bytes);
  // Counts reading, scanning or copying `size_bytes` of existing text (one step per 32 bytes).
  void charge_read(std::size_t size_bytes) { step(size_bytes / 32); }
  // Throws if a string being built has grown past max_output_bytes; counts nothing (the
  // builder charges the finished string once).
  void check_text(std::size_t size_bytes) const;
  // A meter for a comparison, limited to the steps left; charge() counts what it used.
  work_meter meter() const { return work_meter{0, options_.max_steps - steps_}; }
  void charge(const work_meter& m) { step(m.used); }
  // Counts building `n` list or mapping items (two steps each: each holds memory).
  void charge_items(std::uint64_t n) { step(n > (UINT64_MAX >> 1) ? UINT64_MAX : 2 * n); }

  // to_text, bounded by max_output_bytes and charged for.
  std::string text(const value& v) {
    std::string s = to_text(v, options_.max_output_bytes);
    charge_text(s.size());
    return s;
  }

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
