#pragma once
// The scheduler <-> engine protocol: one step_plan per forward pass, one step_result back.
// Plans carry a step number: with scheduler.overlap the scheduler plans step N+1 while step N
// runs, so up to two plans are in flight, executed and answered in step order.
#include <cstdint>
#include <string>
#include <vector>

#include "messages/messages.hpp"
#include "messages/scheduler_counters.hpp"

namespace courier::msg {

// A token that sampling penalties apply to, distinct per row.
struct penalty_entry {
  token_id token = 0;
  std::int32_t output_count = 0;
  bool in_prompt = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, penalty_entry& x) {
  return f(caf::meta::type_name("penalty_entry"), x.token, x.output_count, x.in_prompt);
}

// What the engine keeps for a sequence from its first row until it ends or is preempted, sent
// in the plan of that row (step_plan::starts) and again with its first row after each
// preemption; its rows then carry only what changes each step. (vLLM v1's new and cached
// request data.)
struct sequence_start {
  request_id seq = 0;
  // A hybrid model's recurrent-state slot (the scheduler's, held from admission to preemption
  // or the end); -1 for other models.
  std::int32_t state_slot = -1;
  // The LoRA adapter its rows run with: a slot of the engine's pool (step_plan::lora_loads says
  // which adapter each slot holds); -1: the base model.
  std::int32_t lora_slot = -1;
  // How its first row's state begins (hybrids): state_restore >= 0 copies that snapshot row
  // into state_slot first (resuming at start_pos from a cached prefix); state_copied: a state
  // copy (step_plan::state_copies, this plan's or an earlier one's) put its swapped-out state
  // back; neither: from zeros, so that row starts at position 0.
  std::int32_t state_restore = -1;
  bool state_copied = false;
  // The sampling parameters (has_seed always true, with the logit bias, grammar and
  // prompt_logprobs), in its first start only (carries_sampling): the engine keeps them, and
  // the grammar's state, until the sequence ends; preemption does not change them.
  sampling_params sampling;
  bool carries_sampling = false;
  // A penalised sequence's penalty list (each distinct token of its context so far: in the
  // prompt; times in the output). The engine writes it to the device with the sequence's
  // first sampling row and counts each token sampled for it there, so a penalised row may
  // follow the step before.
  std::vector<penalty_entry> penalties;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sequence_start& x) {
  return f(caf::meta::type_name("sequence_start"), x.seq, x.state_slot, x.lora_slot,
           x.state_restore, x.state_copied, x.sampling, x.carries_sampling, x.penalties);
}

// One sequence's part of a step: a prefill chunk (sample only on the prompt's last chunk) or a
// decode row (its last token, then num_drafts draft tokens to verify). What holds from its
// first row on is in its sequence_start.
struct plan_row {
  request_id seq = 0;
  std::vector<token_id> tokens;           // fed this step, non-empty
  std::int32_t start_pos = 0;             // position of tokens[0]
  // The sequence's block table, sent as a change to the copy the engine keeps: the engine keeps
  // the first keep_blocks entries of its copy and appends new_blocks. The result covers
  // [0, start_pos + tokens.size()). keep_blocks 0 replaces the whole copy (a sequence's first
  // row, its first after preemption). So a decode row carries no block most steps, one every
  // block_size tokens: the message does not grow with the context.
  std::int32_t keep_blocks = 0;
  std::vector<std::int32_t> new_blocks;
  // Hybrid prefix caching: state_snapshot >= 0 copies the sequence's state slot into that
  // snapshot row after the row ran (the state after start_pos + tokens.size()).
  std::int32_t state_snapshot = -1;
  bool sample = false;                    // sample from the last token's logits
  bool decode = false;                    // a decode row (else a prefill chunk)
  // Prompt lookup: the last num_drafts tokens are drafts. Each fed position is sampled (draw
  // index draw_index + j); drafts are accepted while they equal the sampled token.
  std::int32_t num_drafts = 0;
  std::uint64_t draw_index = 0;           // the output index of the token sampled
  // Prompt logprobs: for each fed token i, the token that follows it in the prompt (whose
  // logprob at position start_pos + i is wanted, with the sequence's
  // sampling.prompt_logprobs alternatives), or no_token past the prompt. Empty: none.
  std::vector<token_id> prompt_targets;
  // Planned while the step before ran: tokens holds one placeholder, and the engine feeds the
  // token it sampled for this sequence in the step it launched last, on the device (neither the
  // scheduler nor the engine's host may have seen it yet). If that step failed, or did not
  // sample the sequence, the row's result is an error.
  bool follows = false;
};

inline constexpr token_id no_token = 0xffffffffu;

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, plan_row& x) {
  return f(caf::meta::type_name("plan_row"), x.seq, x.tokens, x.start_pos, x.keep_blocks,
           x.new_blocks, x.state_snapshot, x.sample, x.decode, x.num_drafts, x.draw_index,
           x.prompt_targets, x.follows);
}

// A hybrid's state snapshot moved between the device's snapshot rows and the host tier (the
// scheduler's spill and promote).
struct state_copy {
  bool to_host = false;  // device row -> host row; else host row -> device row
  std::int32_t row = -1;
  std::int32_t host_row = -1;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, state_copy& x) {
  return f(caf::meta::type_name("state_copy"), x.to_host, x.row, x.host_row);
}

// A KV block moved between the device and the host tier (a preempted sequence swapped out, or
// back in): every layer's K and V of device block `block` to or from host block `host_block`.
struct block_copy {
  bool to_host = false;
  std::int32_t block = -1;
  std::int32_t host_block = -1;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, block_copy& x) {
  return f(caf::meta::type_name("block_copy"), x.to_host, x.block, x.host_block);
}

// An adapter written into a slot of the engine's LoRA pool before the plan's rows run (after
// every step before it, in stream order).
struct lora_load {
  std::int32_t slot = -1;
  std::string adapter;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lora_load& x) {
  return f(caf::meta::type_name("lora_load"), x.slot, x.adapter);
}

struct step_plan {
  std::uint64_t step = 0;
  std::vector<plan_row> rows;
  // The sequences whose first row (or first after preemption) is in this plan, each taking
  // effect before the rows.
  std::vector<sequence_start> starts;
  // KV block copies the engine runs before anything else of the step, in this order: a block
  // swapped out is read before a later row (of this step or after) writes it again, and a block
  // swapped in is in place before its sequence's row reads it.
  std::vector<block_copy> block_copies;
  // KV block copies back from the host tier (promotions, swaps in), and out to it (write-through
  // of blocks the prefix cache stored), that the engine enqueues on the device's copy stream after
  // block_copies, to run beside this step's rows and the next ones: no row uses a block they
  // write, or writes one they read, until the engine answers copies_wait{copy_batch}.
  // copy_batch: nonzero, increasing, when async_copies is not empty.
  std::vector<block_copy> async_copies;
  std::uint64_t copy_batch = 0;
  std::vector<lora_load> lora_loads;  // first, in order
  // Snapshot copies the engine runs first, in this order (before any row's restore), so a row
  // given up by a spill is read before it is written again, and a promoted snapshot is in its
  // row before a row restores it.
  std::vector<state_copy> state_copies;
  // Sequences that ended (finished, cancelled, failed) since the plan before, among those a
  // plan has carried: the engine drops all it keeps for them (its sequence record).
  // None of them appears in rows.
  std::vector<request_id> ended;
  // Sequences preempted since the plan before (their blocks went back to the pool): the engine
  // gives back their device state (next-token slot, block table, penalty list, state and
  // LoRA slots), which their next start and row send again (keep_blocks 0), and keeps their
  // sampling parameters and grammar state, which preemption does not change. Listed before this plan's
  // rows take effect, so a sequence preempted and admitted again in one plan is consistent.
  std::vector<request_id> preempted;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, step_plan& x) {
  return f(caf::meta::type_name("step_plan"), x.step, x.rows, x.starts, x.block_copies,
           x.async_copies, x.copy_batch, x.state_copies, x.lora_loads, x.ended, x.preempted);
}

// scheduler -> engine, after the plan that carries batch `batch`: answered once its copies are
// done on the device, or (ok false) when they failed or never ran (the plan failed before them).
struct copies_wait {
  std::uint64_t batch = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, copies_wait& x) {
  return f(caf::meta::type_name("copies_wait"), x.batch);
}

struct copies_done {
  std::uint64_t batch = 0;
  bool ok = false;
  std::string error;  // why not, for the log
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, copies_done& x) {
  return f(caf::meta::type_name("copies_done"), x.batch, x.ok, x.error);
}

// admission -> scheduler -> engine: load the PEFT adapter in `path` as `name`
// (POST /v1/load_lora_adapter), or unload `name` (/v1/unload_lora_adapter; path unused).
// scheduler -> engine only (lora.max_cpu_loras): read a registered adapter's folder again into
// host memory (stage; a plan loads it into a slot only once that has answered), or drop its
// host copy (evict; it stays registered).
struct lora_change {
  enum kind : std::uint8_t { load, unload, stage, evict };
  std::uint8_t op = load;
  std::string name;
  std::string path;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lora_change& x) {
  return f(caf::meta::type_name("lora_change"), x.op, x.name, x.path);
}

// The answer: done, or an HTTP status and why not (400: the adapter cannot be served, naming
// the file and field; 404: no such adapter; 409: the name is taken or still being unloaded).
// A load's answer also carries the fingerprint of what was read (model::lora_adapter).
struct lora_ack {
  bool ok = false;
  std::int32_t status = 0;
  std::string error;
  std::uint64_t fingerprint = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lora_ack& x) {
  return f(caf::meta::type_name("lora_ack"), x.ok, x.status, x.error, x.fingerprint);
}

struct row_result {
  request_id seq = 0;
  // Sampled (empty for a non-final prefill chunk). With drafts: the accepted drafts, then the
  // token sampled where the first draft was rejected (or after the last one): 1 + accepted.
  std::vector<token_id> tokens;
  std::vector<token_logprob> logprobs;  // parallel to tokens when the row asked for logprobs
  std::vector<token_logprob> prompt_logprobs;  // one per prompt target, in order
  std::vector<float> embedding;  // a sampling row of an embedding request (sampling.embed)
  // This row failed alone (its grammar allows no token of the vocabulary here): the scheduler
  // fails the sequence with this message; tokens are not used.
  error_code error = error_code::none;
  std::string message;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, row_result& x) {
  return f(caf::meta::type_name("row_result"), x.seq, x.tokens, x.logprobs, x.prompt_logprobs,
           x.embedding, x.error, x.message);
}

struct step_result {
  std::uint64_t step = 0;
  std::vector<row_result> rows;         // in plan order; empty when error != none
  error_code error = error_code::none;
  std::string message;
  double forward_ms = 0;  // engine time for the step: from its launch (or the answer to the step
                          // before, if later) to its answer
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, step_result& x) {
  return f(caf::meta::type_name("step_result"), x.step, x.rows, x.error, x.message, x.forward_ms);
}

// engine -> whoever asks at start: what the loaded model and the KV memory allow.
struct engine_ready {
  std::int32_t num_kv_blocks = 0;
  std::int32_t block_size = 16;
  std::int32_t vocab_size = 0;
  std::int32_t hidden_size = 0;  // an embedding's length (sampling_params::embed)
  std::int64_t max_model_len = 0;
  std::vector<token_id> eos_token_ids;
  std::string model_name;
  // What was loaded under that name (storage::weights_fingerprint, tokenizer_fingerprint): the
  // shared lookup cache's scopes name them.
  std::uint64_t weights_fingerprint = 0;
  std::uint64_t tokenizer_fingerprint = 0;
  std::string device_name;
  // The model carries recurrent state per sequence (a hybrid's Mamba-2 layers): a sequence
  // resumes from cached KV blocks only where a snapshot of that state is kept, and verifies a
  // draft only in one of the step's draft_state_rows (its state after each draft position is
  // kept there, and the one after the last accepted put back): at most that many drafts a step,
  // none without them.
  bool recurrent = false;
  std::int32_t draft_state_rows = 0;
  // The KV host tier (block_copy): host blocks (0: none), and what swapping weighs against
  // recomputing: one block's bytes over all layers, with device_flops, host_bytes_per_s,
  // linear_flops_per_token and attention_flops_per_pair below (every model).
  std::int32_t host_kv_blocks = 0;
  double kv_block_bytes = 0;
  std::int32_t state_slots = 0;  // recurrent: the state pool's slots (sequences running at once)
  // Recurrent: device state rows [state_slots, state_slots + snapshot_slots) hold the prefix
  // cache's snapshots (0: no snapshots, so no prefix reuse); and what the snapshot policy weighs.
  std::int32_t snapshot_slots = 0;
  double snapshot_bytes = 0;            // one snapshot (every Mamba-2 layer's conv and SSM state)
  double kv_bytes_per_token = 0;        // the attention layers' KV
  double linear_flops_per_token = 0;    // 2 x parameters
  double attention_flops_per_pair = 0;  // per (query, key) pair over the attention layers
  // The host tier: rows of host memory a snapshot may be spilled to (0: none), and what a spill
  // weighs: the device's compute rate (FLOP/s) against its host copy rate (bytes/s).
  std::int32_t host_snapshot_slots = 0;
  double device_flops = 0;
  double host_bytes_per_s = 0;
  // LoRA: the engine's adapter slots (0: no pool) and the adapters it can load into them, by
  // the name requests give as `model`; how many keep a host copy (lora.max_cpu_loras, 0: all)
  // and those that have one now.
  std::int32_t lora_slots = 0;
  std::vector<std::string> lora_adapters;
  std::vector<std::uint64_t> lora_adapter_fingerprints;  // parallel: model::lora_adapter's
  std::int32_t lora_host_capacity = 0;
  std::vector<std::string> lora_host_adapters;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, engine_ready& x) {
  return f(caf::meta::type_name("engine_ready"), x.num_kv_blocks, x.block_size, x.vocab_size,
           x.hidden_size, x.max_model_len, x.eos_token_ids, x.model_name, x.weights_fingerprint,
           x.tokenizer_fingerprint, x.device_name, x.recurrent,
           x.draft_state_rows, x.host_kv_blocks, x.kv_block_bytes, x.state_slots, x.snapshot_slots, x.snapshot_bytes, x.kv_bytes_per_token,
           x.linear_flops_per_token, x.attention_flops_per_pair, x.host_snapshot_slots,
           x.device_flops, x.host_bytes_per_s, x.lora_slots, x.lora_adapters, x.lora_adapter_fingerprints,
           x.lora_host_capacity, x.lora_host_adapters);
}

// scheduler -> whoever asks: a snapshot of its state and counters (counters are monotonic).
struct scheduler_stats {
  std::int32_t num_waiting = 0;
  std::int32_t num_running = 0;
  std::int32_t num_free_blocks = 0;
  std::int32_t num_total_blocks = 0;
  std::int32_t num_cached_blocks = 0;     // held by the prefix cache
  std::uint64_t num_steps = 0;
  // The host tier: blocks written through when stored (of those spilled), blocks it keeps.
  std::uint64_t host_cache_written_blocks = 0;
  std::int32_t num_host_cached_blocks = 0;
  // The disk tier behind it: blocks written and read, entries a previous run left that were
  // kept, prefetches, blocks it keeps, requests waiting for reads before they queue, disk
  // reads and writes sent and not yet answered.
  std::uint64_t disk_written_blocks = 0;
  std::uint64_t disk_read_blocks = 0;
  std::uint64_t disk_restored_blocks = 0;
  std::uint64_t disk_prefetches = 0;
  std::int64_t num_disk_cached_blocks = 0;
  std::int32_t num_loading = 0;
  std::int32_t disk_ops_in_flight = 0;
  // Copies back from the host tier on the device's copy stream (promotions, swaps in): batches
  // sent, failed (their requests computed those tokens instead), and those not yet answered;
  // requests admitted and waiting for theirs.
  std::uint64_t copy_batches = 0;
  std::uint64_t copy_batch_failures = 0;
  std::int32_t copy_batches_in_flight = 0;
  std::int32_t num_copying = 0;
  std::int32_t lora_slots_in_use = 0;  // slots held by running sequences
  std::uint64_t lora_host_evictions = 0;  // host copies dropped (lora.max_cpu_loras)
  std::uint64_t num_finished = 0;
  std::uint64_t num_cancelled = 0;
  std::uint64_t num_failed = 0;
  std::uint64_t prompt_tokens = 0;        // prompt tokens of admitted requests
  std::uint64_t prefilled_tokens = 0;     // prompt tokens actually computed (not from cache)
  std::uint64_t cached_tokens = 0;        // prompt tokens reused from the prefix cache
  std::uint64_t spec_drafts = 0;          // decode rows that carried drafts (verified)
  std::uint64_t follow_rows = 0;          // decode rows planned while the step before ran
  std::uint64_t snapshots_taken = 0;      // hybrid models: snapshots taken and kept
  std::int32_t num_snapshots = 0;         // gauge: snapshots kept
  std::int32_t snapshot_capacity = 0;
  // The counters telemetry exports one to one (messages/scheduler_counters.hpp).
  COURIER_SCHEDULER_COUNTERS(COURIER_COUNTER_FIELD)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, scheduler_stats& x) {
  return f(caf::meta::type_name("scheduler_stats"), x.num_waiting, x.num_running, x.num_free_blocks,
           x.num_total_blocks, x.num_cached_blocks, x.num_steps, x.host_cache_written_blocks,
           x.num_host_cached_blocks, x.disk_written_blocks, x.disk_read_blocks,
           x.disk_restored_blocks, x.disk_prefetches, x.num_disk_cached_blocks, x.num_loading,
           x.disk_ops_in_flight, x.copy_batches, x.copy_batch_failures, x.copy_batches_in_flight,
           x.num_copying, x.lora_slots_in_use, x.lora_host_evictions, x.num_finished,
           x.num_cancelled, x.num_failed, x.prompt_tokens, x.prefilled_tokens, x.cached_tokens,
           x.spec_drafts, x.follow_rows, x.snapshots_taken, x.num_snapshots,
           x.snapshot_capacity COURIER_SCHEDULER_COUNTERS(COURIER_COUNTER_ARG));
}

}  // namespace courier::msg
