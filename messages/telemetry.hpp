#pragma once
// scheduler -> telemetry: what happened since the previous report. One report per scheduler
// handler at most (never one per token): counter increments, gauge values now, the steps that
// completed and the requests that ended. Times are seconds on the steady clock.
#include <cstdint>
#include <string>
#include <vector>

#include "messages/messages.hpp"

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
  // Counter increments since the previous report.
  std::uint64_t prompt_tokens = 0;      // prompt tokens of requests scheduled for the first time
  std::uint64_t generation_tokens = 0;  // tokens emitted
  std::uint64_t prefix_queries = 0;     // prompt tokens looked up in the prefix cache
  std::uint64_t prefix_hits = 0;        // of those, tokens whose blocks were reused
  std::uint64_t preemptions = 0;
  // Of those, swapped to the KV host tier or recomputed; and blocks the swaps copied each way.
  std::uint64_t swap_outs = 0;
  std::uint64_t recompute_preemptions = 0;
  std::uint64_t swap_drains = 0;  // hybrids given no row for a step so that they swap
  std::uint64_t swapped_out_blocks = 0;
  std::uint64_t swapped_in_blocks = 0;
  // The prefix cache's host tier: prompt tokens it served, blocks it took in and gave back; and
  // (a gauge) the blocks it keeps.
  std::uint64_t host_cache_hit_tokens = 0;
  std::uint64_t host_cache_spilled_blocks = 0;
  std::uint64_t host_cache_promoted_blocks = 0;
  std::int32_t host_cached_blocks = 0;
  std::int32_t cached_blocks = 0;  // device KV blocks the prefix cache indexes (a gauge)
  // Bytes the host tier took in from the device (spills and swaps out) and gave back.
  std::uint64_t host_tier_out_bytes = 0;
  std::uint64_t host_tier_in_bytes = 0;
  // The disk tier: prompt tokens it served (also in host_cache_hit_tokens), bytes written and
  // read, copies that failed each way; and (a gauge) the blocks it keeps.
  std::uint64_t disk_cache_hit_tokens = 0;
  std::uint64_t disk_written_bytes = 0;
  std::uint64_t disk_read_bytes = 0;
  std::uint64_t disk_write_failures = 0;
  std::uint64_t disk_read_failures = 0;
  std::int64_t disk_cached_blocks = 0;
  std::uint64_t spec_drafts = 0;        // rows that carried draft tokens
  std::uint64_t spec_drafts_shared = 0;  // of those, rows drafted from the tenant's shared scope
  std::uint64_t spec_draft_tokens_own = 0;     // draft tokens from the request's own history
  std::uint64_t spec_draft_tokens_shared = 0;  // draft tokens from the tenant's shared scope
  std::uint64_t spec_accepted_own = 0;
  std::uint64_t spec_accepted_shared = 0;
  // Hybrid models' snapshot cache: admissions resumed from a snapshot, by kind (exact,
  // intermediate, branch, tail); admissions that found none; prompt tokens whose KV was stored
  // but recomputed for want of a snapshot.
  std::uint64_t snapshot_hits[4] = {0, 0, 0, 0};
  std::uint64_t snapshot_spilled_hits = 0;  // of the hits, snapshots promoted from the host tier
  std::uint64_t snapshot_misses = 0;
  std::uint64_t snapshot_recomputed_tokens = 0;
  // LoRA: the engine's adapter slots, those running sequences hold, adapters loaded into them,
  // admissions ahead of a request waiting for a slot, adapters read again into host memory.
  std::int32_t lora_slots = 0;
  std::int32_t lora_slots_in_use = 0;
  std::uint64_t lora_loads = 0;
  std::uint64_t lora_passed = 0;
  std::uint64_t lora_host_reads = 0;
  std::vector<step_summary> steps;
  std::vector<request_summary> finished;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, telemetry_report& x) {
  return f(caf::meta::type_name("telemetry_report"), x.num_running, x.num_waiting, x.kv_usage,
           x.state_usage, x.snapshot_usage,
           x.prompt_tokens, x.generation_tokens, x.prefix_queries, x.prefix_hits, x.preemptions,
           x.swap_outs, x.recompute_preemptions, x.swap_drains, x.swapped_out_blocks,
           x.swapped_in_blocks,
           x.host_cache_hit_tokens, x.host_cache_spilled_blocks, x.host_cache_promoted_blocks,
           x.host_cached_blocks, x.cached_blocks, x.host_tier_out_bytes, x.host_tier_in_bytes,
           x.disk_cache_hit_tokens, x.disk_written_bytes, x.disk_read_bytes,
           x.disk_write_failures, x.disk_read_failures, x.disk_cached_blocks,
           x.spec_drafts, x.spec_drafts_shared, x.spec_draft_tokens_own,
           x.spec_draft_tokens_shared,
           x.spec_accepted_own, x.spec_accepted_shared, x.snapshot_hits[0], x.snapshot_hits[1],
           x.snapshot_hits[2], x.snapshot_hits[3], x.snapshot_spilled_hits, x.snapshot_misses,
           x.snapshot_recomputed_tokens, x.lora_slots, x.lora_slots_in_use, x.lora_loads,
           x.lora_passed, x.lora_host_reads, x.steps, x.finished);
}

// request actor -> telemetry: what one request sent that courier did not act on.
struct admission_report {
  std::vector<std::string> ignored_fields;  // top-level body fields ignored (unknown to courier)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, admission_report& x) {
  return f(caf::meta::type_name("admission_report"), x.ignored_fields);
}

}  // namespace courier::msg
