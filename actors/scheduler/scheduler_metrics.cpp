// scheduler_core, telemetry: what goes into the report for the telemetry actor (each step
// answered, each request's summary; scheduler_report accumulates them), the KV gauge, and each
// answered row for the observer (the actor's trace marks).
#include "actors/scheduler/scheduler_core.hpp"

#include <algorithm>

namespace courier::actors {

void scheduler_core::in_flight_mix(std::int32_t& prefill_tokens,
                                   std::int32_t& decode_rows) const {
  prefill_tokens = decode_rows = 0;
  if (flights_.empty()) return;
  for (const fed_row& r : flights_.back().rows) {
    if (r.decode) {
      ++decode_rows;
    } else {
      prefill_tokens += r.num_tokens;
    }
  }
}

void scheduler_core::note_step(const flight& f, const msg::step_result& r,
                               std::int64_t now_ns) {
  const bool rows_ok = r.error == msg::error_code::none && r.rows.size() == f.rows.size();
  msg::step_summary st;
  st.step = f.step;
  // A step planned ahead waits behind the one before it; its time starts when that one ended.
  st.duration_s = static_cast<double>(now_ns - std::max(f.sent_ns, last_result_ns_)) * 1e-9;
  last_result_ns_ = now_ns;
  st.forward_s = r.forward_ms * 1e-3;
  st.num_rows = static_cast<std::int32_t>(f.rows.size());
  scheduler_observer* const watch =
      opts_.observer && opts_.observer->wants_rows() ? opts_.observer.get() : nullptr;
  for (std::size_t i = 0; i < f.rows.size(); ++i) {
    const fed_row& row = f.rows[i];
    st.num_draft_tokens += row.num_drafts;
    if (row.decode) {
      ++st.num_decode_rows;
    } else {
      st.num_prefill_tokens += row.num_tokens;
    }
    if (watch) {  // which requests the step served (the trace's zero-length marks)
      scheduler_observer::row w;
      w.seq = row.seq;
      w.decode = row.decode;
      w.prefill_tokens = row.decode ? 0 : row.num_tokens;
      w.drafts = row.num_drafts;
      if (row.num_drafts > 0 && rows_ok) {
        w.accepted = static_cast<std::int32_t>(r.rows[i].tokens.size()) - 1;
      }
      watch->row_done(f.step, f.sent_ns, w);
    }
  }
  report_.step_answered(st);
}

// Called just before the sequence is removed: its intervals move into the summary.
void scheduler_core::summarize(sequence& s, msg::finish_reason why, msg::error_code code) {
  msg::request_summary q;
  q.finish = why;
  q.error = code;
  q.prompt_tokens = s.num_prompt;
  q.generation_tokens = s.num_output();
  q.cached_tokens = s.cached_tokens;
  s.timing.summarize(q, now());
  q.adapter = s.req.adapter;
  report_.request_ended(std::move(q));
}

// Blocks some sequence holds, as a fraction of all (blocks only the prefix cache holds can be
// reclaimed, so they do not count, as in vLLM). Shared blocks count once: a mark per block. The
// walk is O(blocks held), so it is refreshed at most every 20 ms.
double scheduler_core::kv_usage() {
  const std::int64_t now = this->now();
  if (running_.empty()) return kv_usage_ = 0.0;
  if (now - kv_usage_at_ns_ < 20'000'000 && kv_usage_at_ns_ != 0) return kv_usage_;
  kv_usage_at_ns_ = now;
  if (block_marks_.size() != static_cast<std::size_t>(kv_.num_blocks())) {
    block_marks_.assign(static_cast<std::size_t>(kv_.num_blocks()), 0);
  }
  ++mark_epoch_;
  std::int64_t held = 0;
  for (msg::request_id id : running_) {
    for (cache::block_id b : seqs_.at(id)->blocks.ids()) {
      std::uint32_t& m = block_marks_[static_cast<std::size_t>(b.value)];
      if (m != mark_epoch_) {
        m = mark_epoch_;
        ++held;
      }
    }
  }
  kv_usage_ = kv_.num_blocks() ? static_cast<double>(held) / kv_.num_blocks() : 0.0;
  return kv_usage_;
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
