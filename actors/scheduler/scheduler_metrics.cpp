// scheduler_core, telemetry: what goes into the report for the telemetry actor (each step
// answered, each request's summary; scheduler_report accumulates them), the KV gauge, and each
// answered row for the observer (the actor's trace marks).
#include "actors/scheduler/scheduler_core.hpp"

#include <algorithm>

namespace courier::actors {

void scheduler_core::note_step(const flight& f, const msg::step_result& r,
                               std::int64_t now_ns) {
  report_.step_answered(step_summary_of(f, r, std::max(f.sent_ns, last_result_ns_), now_ns));
  last_result_ns_ = now_ns;
  if (!opts_.observer || !opts_.observer->wants_rows()) return;
  for (std::size_t i = 0; i < f.rows.size(); ++i) {  // the trace's marks of the requests served
    opts_.observer->row_done(f.step, f.sent_ns, observed_row(f, r, i));
  }
}

// The usage gauge (block_usage), refreshed at most every 20 ms: a walk is O(blocks held).
double scheduler_core::kv_usage() {
  const std::int64_t now = this->now();
  if (running_.empty()) return kv_usage_ = 0.0;
  if (now - kv_usage_at_ns_ < 20'000'000 && kv_usage_at_ns_ != 0) return kv_usage_;
  kv_usage_at_ns_ = now;
  usage_.begin(kv_.num_blocks());
  for (const msg::request_id id : running_) usage_.add(seqs_.at(id)->blocks);
  return kv_usage_ = usage_.fraction();
}

std::optional<msg::telemetry_report> scheduler_core::take_report() {
  const std::int32_t slots = states_.capacity();
  const double state_usage =
      slots ? static_cast<double>(slots - states_.num_free()) / static_cast<double>(slots) : 0.0;
  std::optional<msg::telemetry_report> r =
      report_.take(stats(), static_cast<std::int32_t>(running_.size()),
                   static_cast<std::int32_t>(waiting_.size()), kv_usage(), state_usage);
  if (r) r->lora_slots = loras_.slots().capacity();
  return r;
}

}  // namespace courier::actors
