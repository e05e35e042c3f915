#pragma once
// The scheduler's counters that telemetry exports one to one, listed once. Each entry
// X(field, metric, label, help) is:
// - a std::uint64_t field of msg::scheduler_stats, the running total the scheduler counts;
// - the same field of msg::telemetry_report, its increase since the report before (the
//   scheduler's report diff, actors/scheduler/scheduler_metrics.cpp);
// - the Prometheus counter `metric` (with the one label `label`, "key=value", or none: ""),
//   described by `help` (actors/telemetry/metrics.cpp). Entries of one metric share its help.
// A counter added here is counted where the scheduler increments it, and reported, diffed,
// serialized (both messages' inspect) and exported with nothing else to write. Counters that
// are derived (bytes from blocks) or not exported stay plain fields of the messages.

#define COURIER_HELP_KV_KEPT \
  "Preemptions by how the sequence's KV was kept: swapped to the host tier, or recomputed."
#define COURIER_HELP_SWAP_BLOCKS "KV blocks copied by swap preemption, by direction."
#define COURIER_HELP_HOST_BLOCKS \
  "KV blocks the host tier's prefix cache took in from the device (out) and gave back (in)."
#define COURIER_HELP_DISK_ERRORS                                                            \
  "KV disk tier copies that failed (I/O errors, damaged or mismatched blocks): the block is " \
  "dropped, never served."
#define COURIER_HELP_DRAFTS \
  "Decode rows that carried prompt-lookup draft tokens (each verified), by source."
#define COURIER_HELP_DRAFT_TOKENS "Prompt-lookup draft tokens proposed, by source."
#define COURIER_HELP_ACCEPTED "Prompt-lookup draft tokens accepted, by source."
#define COURIER_HELP_SNAPSHOT_HITS \
  "Hybrid models: admissions resumed from a state snapshot, by where it was taken."

// clang-format off
#define COURIER_SCHEDULER_COUNTERS(X)                                                           \
  X(generated_tokens, "courier:generation_tokens_total", "", "Generated tokens.")                \
  X(num_preemptions, "courier:num_preemptions_total", "", "Preemptions (KV cache full).")       \
  X(swap_outs, "courier:kv_preemptions_total", "kind=swap", COURIER_HELP_KV_KEPT)               \
  X(recompute_preemptions, "courier:kv_preemptions_total", "kind=recompute",                    \
    COURIER_HELP_KV_KEPT)                                                                       \
  X(swap_drains, "courier:kv_swap_drains_total", "",                                            \
    "Hybrid sequences chosen for preemption with a row in flight, given no row for a step so "  \
    "that they swap their state instead of recomputing.")                                       \
  X(swapped_out_blocks, "courier:kv_swap_blocks_total", "direction=out",                        \
    COURIER_HELP_SWAP_BLOCKS)                                                                   \
  X(swapped_in_blocks, "courier:kv_swap_blocks_total", "direction=in", COURIER_HELP_SWAP_BLOCKS) \
  X(host_cache_hit_tokens, "courier:prefix_cache_host_hits_total", "",                          \
    "Prompt tokens whose KV came back from the host tier (also counted in "                     \
    "courier:prefix_cache_hits_total).")                                                        \
  X(host_cache_spilled_blocks, "courier:kv_host_tier_blocks_total", "direction=out",            \
    COURIER_HELP_HOST_BLOCKS)                                                                   \
  X(host_cache_promoted_blocks, "courier:kv_host_tier_blocks_total", "direction=in",            \
    COURIER_HELP_HOST_BLOCKS)                                                                   \
  X(disk_cache_hit_tokens, "courier:prefix_cache_disk_hits_total", "",                          \
    "Prompt tokens whose KV came back from the disk tier (also counted in "                     \
    "courier:prefix_cache_host_hits_total and courier:prefix_cache_hits_total).")               \
  X(disk_write_failures, "courier:kv_disk_tier_errors_total", "op=write",                       \
    COURIER_HELP_DISK_ERRORS)                                                                   \
  X(disk_read_failures, "courier:kv_disk_tier_errors_total", "op=read", COURIER_HELP_DISK_ERRORS) \
  X(spec_drafts_shared, "courier:spec_decode_num_drafts_total", "source=shared",                \
    COURIER_HELP_DRAFTS)                                                                        \
  X(spec_draft_tokens_own, "courier:spec_decode_num_draft_tokens_total", "source=own",          \
    COURIER_HELP_DRAFT_TOKENS)                                                                  \
  X(spec_draft_tokens_shared, "courier:spec_decode_num_draft_tokens_total", "source=shared",    \
    COURIER_HELP_DRAFT_TOKENS)                                                                  \
  X(spec_accepted_own, "courier:spec_decode_num_accepted_tokens_total", "source=own",           \
    COURIER_HELP_ACCEPTED)                                                                      \
  X(spec_accepted_shared, "courier:spec_decode_num_accepted_tokens_total", "source=shared",     \
    COURIER_HELP_ACCEPTED)                                                                      \
  X(snapshot_hits_exact, "courier:ssm_snapshot_hits_total", "kind=exact",                       \
    COURIER_HELP_SNAPSHOT_HITS)                                                                 \
  X(snapshot_hits_intermediate, "courier:ssm_snapshot_hits_total", "kind=intermediate",         \
    COURIER_HELP_SNAPSHOT_HITS)                                                                 \
  X(snapshot_hits_branch, "courier:ssm_snapshot_hits_total", "kind=branch",                     \
    COURIER_HELP_SNAPSHOT_HITS)                                                                 \
  X(snapshot_hits_tail, "courier:ssm_snapshot_hits_total", "kind=tail",                         \
    COURIER_HELP_SNAPSHOT_HITS)                                                                 \
  X(snapshot_hits_spilled, "courier:ssm_snapshot_spilled_hits_total", "",                       \
    "Hybrid models: admissions resumed from a snapshot brought back from host memory (the "     \
    "host tier).")                                                                              \
  X(snapshot_misses, "courier:ssm_snapshot_misses_total", "",                                   \
    "Hybrid models: admissions that found no state snapshot to resume from.")                   \
  X(snapshot_recomputed_tokens, "courier:ssm_snapshot_recomputed_tokens_total", "",             \
    "Hybrid models: prompt tokens whose KV blocks were cached but recomputed because no "       \
    "snapshot covered them.")                                                                   \
  X(lora_loads, "courier:lora_loads_total", "",                                                 \
    "LoRA adapters loaded into a device slot (a slot changing adapter).")                       \
  X(lora_passed, "courier:lora_passed_total", "",                                               \
    "Requests admitted ahead of an older one waiting for a LoRA slot.")                         \
  X(lora_host_stages, "courier:lora_host_reads_total", "",                                      \
    "LoRA adapters read from their folders again (lora.max_cpu_loras: no host copy).")
// clang-format on

// Helpers for the messages: each counter as a field, and as an argument of inspect.
#define COURIER_COUNTER_FIELD(field, metric, label, help) std::uint64_t field = 0;
#define COURIER_COUNTER_ARG(field, metric, label, help) , x.field
