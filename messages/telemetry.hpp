#pragma once
// scheduler -> telemetry: what happened since the previous report. One report per scheduler
// handler at most (never one per token): counter increments, gauge values now, the steps that
// completed and the requests that ended. Times are seconds on the steady clock.
#include <cstdint>
#include <string>
#include <vector>

#include "messages/messages.hpp"
#include "messages/scheduler_counters.hpp"

namespace courier::msg {

// One completed engine step as the scheduler saw it.
struct step_summary {
  std::uint64_t step = 0;
  double duration_s = 0;            // plan sent (or the step before handled) -> result handled
  double forward_s = 0;             // the engine's own time for the step
  std::int32_t num_rows = 0;
  std::int32_t num_prefill_tokens = 0;
  std::int32_t num_decode_rows = 0;
  std::int32_t num_draft_tokens = 0;  // fed for verification, besides one per decode row
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, step_summary& x) {
  return f(caf::meta::type_name("step_summary"), x.step, x.duration_s, x.forward_s, x.num_rows,
           x.num_prefill_tokens, x.num_decode_rows, x.num_draft_tokens);
}

// One request that ended (finished, cancelled or failed). Phase times are -1 when the request
// never reached the phase (e.g. cancelled while waiting).
struct request_summary {
  finish_reason finish = finish_reason::none;
  error_code error = error_code::none;
  std::int32_t prompt_tokens = 0;
  std::int32_t generation_tokens = 0;
  std::int32_t cached_tokens = 0;
  double e2e_s = 0;        // arrival -> end
  double queue_s = -1;     // arrival -> first scheduled
  double ttft_s = -1;      // arrival -> first output token
  double prefill_s = -1;   // first scheduled -> first output token
  double decode_s = -1;    // first output token -> end
  std::vector<float> inter_token_s;  // between consecutive steps that gave it tokens
  std::string adapter;  // its LoRA adapter; empty: the base model
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, request_summary& x) {
  return f(caf::meta::type_name("request_summary"), x.finish, x.error, x.prompt_tokens,
           x.generation_tokens, x.cached_tokens, x.e2e_s, x.queue_s, x.ttft_s, x.prefill_s,
           x.decode_s, x.inter_token_s, x.adapter);
}

struct telemetry_report {
  // Gauges: values now.
  std::int32_t num_running = 0;
  std::int32_t num_waiting = 0;
  double kv_usage = 0;  // fraction of KV blocks held by sequences, in [0, 1]
  double state_usage = 0;  // hybrid models: fraction of recurrent-state slots held, in [0, 1]
  double snapshot_usage = 0;  // hybrid models: fraction of snapshot rows kept by the cache
  std::int32_t host_cached_blocks = 0;  // KV blocks the host tier's prefix cache keeps
  std::int32_t cached_blocks = 0;  // device KV blocks the prefix cache indexes
  std::int64_t disk_cached_blocks = 0;  // KV blocks the disk tier keeps
  // LoRA: the engine's adapter slots, and those running sequences hold.
  std::int32_t lora_slots = 0;
  std::int32_t lora_slots_in_use = 0;
  // Counter increments since the previous report.
  std::uint64_t prompt_tokens = 0;      // prompt tokens of requests scheduled for the first time
  std::uint64_t prefix_queries = 0;     // prompt tokens looked up in the prefix cache
  std::uint64_t prefix_hits = 0;        // of those, tokens whose blocks were reused
  // Bytes the host tier took in from the device (spills and swaps out) and gave back; bytes
  // the disk tier wrote and read.
  std::uint64_t host_tier_out_bytes = 0;
  std::uint64_t host_tier_in_bytes = 0;
  std::uint64_t disk_written_bytes = 0;
  std::uint64_t disk_read_bytes = 0;
  std::uint64_t spec_drafts = 0;  // rows that carried draft tokens (spec_drafts_shared: shared)
  // The scheduler's counters exported one to one (messages/scheduler_counters.hpp).
  COURIER_SCHEDULER_COUNTERS(COURIER_COUNTER_FIELD)
  std::vector<step_summary> steps;
  std::vector<request_summary> finished;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, telemetry_report& x) {
  return f(caf::meta::type_name("telemetry_report"), x.num_running, x.num_waiting, x.kv_usage,
           x.state_usage, x.snapshot_usage, x.host_cached_blocks, x.cached_blocks,
           x.disk_cached_blocks, x.lora_slots, x.lora_slots_in_use, x.prompt_tokens,
           x.prefix_queries, x.prefix_hits, x.host_tier_out_bytes, x.host_tier_in_bytes,
           x.disk_written_bytes, x.disk_read_bytes, x.spec_drafts, x.steps,
           x.finished COURIER_SCHEDULER_COUNTERS(COURIER_COUNTER_ARG));
}

// request actor -> telemetry: what one request sent that courier did not act on.
struct admission_report {
  std::vector<std::string> ignored_fields;  // top-level body fields ignored (unknown to courier)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, admission_report& x) {
  return f(caf::meta::type_name("admission_report"), x.ignored_fields);
}

// request actor -> telemetry, when the trace keeps a request's spans: the id its HTTP request
// carries (x-request-id), so that a trace can be searched by the id a client knows.
struct request_label {
  std::uint64_t request = 0;  // the request's spans' `req` (its first choice's id)
  std::string id;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, request_label& x) {
  return f(caf::meta::type_name("request_label"), x.request, x.id);
}

}  // namespace courier::msg
