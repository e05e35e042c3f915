#pragma once
// One request as the scheduler tracks it. Its lifecycle is one field, `state`:
//
//                 its prompt's blocks on disk          the reads end
//   submit ──► waiting ───────────────────────► loading ─────────────► waiting
//                │
//                │ admitted                                              last prompt
//                ├──────────────────────────────────────► prefilling ──────────────► decoding
//                │ with blocks from the host tier             ▲          token sampled
//                └──► copying_in ──copies done──► resuming ───┘ a row of it answered
//
//   preempted (any running state) ──► waiting: recomputed when admitted again; or, its KV
//   swapped out to the host tier, ──► waiting ──a plan carries the copies out──► swapping_out
//   ──that step answers──► waiting (admitted again with its blocks copied in).
//   Any state ends (finished, cancelled, failed): the sequence goes with its final token_event.
//
// Running (in running_): copying_in, resuming, prefilling, decoding. Queued (waiting_): waiting,
// swapping_out. loading: in disk_reads::loading().
// A preempted sequence restarts from its prompt plus the tokens it already emitted; its
// output is unchanged because draws depend only on (seed, output index) and the logits.
// With two steps in flight, a sequence whose token from step N is not yet known can still get a
// row in step N + 1 that "follows" it: the engine feeds the token it sampled at N.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "actors/scheduler/draft_state.hpp"
#include "actors/scheduler/lora_slots.hpp"
#include "actors/scheduler/request_timing.hpp"
#include "actors/scheduler/state_pool.hpp"
#include "cache/block_refs.hpp"
#include "cache/prefix_match.hpp"
#include "actors/scheduler/snapshot_policy.hpp"
#include "cache/snapshot_index.hpp"
#include "messages/messages.hpp"
#include "messages/step.hpp"

namespace courier::actors {

enum class seq_state : std::uint8_t {
  waiting,       // queued; holds nothing on the device (its swapped-out KV, if any, on the host)
  loading,       // its prompt's blocks being read from disk into the host tier (disk_reads)
  swapping_out,  // queued, its KV copied out by a step in flight: not admitted before it answers
  copying_in,    // admitted with blocks copied back from the host tier (copy_batch): no row
                 // until the engine says they are done
  resuming,      // copied back, no row of it answered since: not a victim (its blocks freed
                 // nothing yet, and one preempted again before it goes on could be so forever)
  prefilling,    // running, part-way through its prompt
  decoding,      // running, sampling its output
};

constexpr bool is_running(seq_state s) {
  switch (s) {
    case seq_state::waiting:
    case seq_state::loading:
    case seq_state::swapping_out:
      return false;
    case seq_state::copying_in:
    case seq_state::resuming:
    case seq_state::prefilling:
    case seq_state::decoding:
      return true;
  }
  return false;
}

// A hybrid's snapshot of its recurrent state at `depth` tokens, being taken into a snapshot row
// by a step in flight (or taken: that step answered), not yet in the prefix cache.
struct pending_snapshot {
  std::int32_t depth = 0;
  std::int32_t slot = -1;
  cache::snapshot_kind kind = cache::snapshot_kind::exact;
  bool taken = false;
};

struct sequence {
  msg::submit req;                       // prompt, parameters, reply_to
  seq_state state = seq_state::waiting;
  std::vector<msg::token_id> tokens;     // prompt, then every emitted token
  std::int32_t num_prompt = 0;
  std::int32_t num_computed = 0;         // leading tokens whose KV is in the cache
  // Planning ahead (scheduler.overlap): what the steps in flight will add. Rows are planned from
  // next_pos(); a row whose input is the token a step in flight samples "follows" it.
  std::int32_t num_in_flight = 0;        // tokens fed by steps in flight
  std::int32_t samples_in_flight = 0;    // sampled rows in flight, their tokens not yet known
  bool drafts_in_flight = false;         // a row in flight verifies drafts (nothing may follow)
  std::uint32_t epoch = 0;               // +1 at each preemption: rows planned before are void
  cache::block_refs blocks;              // block table; one reference held on each
  // A hybrid model's recurrent-state slot: held while running (admission to preemption or the
  // end), given back by reset() or with the sequence.
  state_slot recurrent;
  // Its LoRA adapter's slot (req.adapter not empty): held while running, like `recurrent`.
  lora_hold lora;
  // Hybrid prefix caching: the snapshot its next row restores (restore_slot, -1 once sent or
  // none; restore_block pinned in the cache from the lookup until that row's step answers),
  // the snapshots it is taking, and the prefill depths still to snapshot at (ascending: a
  // prefill row ends at the next).
  std::int32_t restore_slot = -1;
  cache::block_id restore_block;  // the pinned snapshot's key; value -1: none pinned
  std::vector<pending_snapshot> snapshots;
  std::vector<snapshot_point> checkpoints;
  std::int32_t num_in_cache = 0;         // leading tokens whose blocks are the prefix cache's
  // Swapped out at preemption: the host tier's blocks holding the KV of its first
  // swapped_tokens tokens, copied back in when it is admitted again. Not while the step that
  // carries the copies out is in flight (swapping_out): if it fails they may not have run.
  // Before that step is planned the copies back simply queue behind the copies out.
  cache::block_refs swapped;
  std::int32_t swapped_tokens = 0;
  // A hybrid's recurrent state swapped out with its KV: the host state row holding it (-1:
  // none), given back once the copy back is queued (state_copied: its first row continues from
  // the state copied into its slot, not from a snapshot).
  std::int32_t swapped_state = -1;
  bool state_copied = false;
  // The disk tier: the chain hashes of the prompt's blocks past the device's match that the
  // host tier had or that were read from disk for it, and, until its admission, a pin on the
  // host blocks that hold them (so the host tier does not evict them before the admission
  // copies them to the device).
  std::vector<std::uint64_t> disk_hashes;
  cache::block_refs host_pins;
  // And the device's blocks of the prompt's head that those continue (the prefix cache's
  // pin_prefix), held from the reads' start until its admission looks them up, so that no
  // eviction meanwhile takes a prefix it is about to use.
  cache::prefix_match device_pin;
  std::int32_t disk_loads = 0;  // lookups for it on disk (at submit, then once at admission)
  // Admitted with blocks copied back from the host tier (promoted, or swapped in) on the
  // device's copy stream: the batch that carries them (0 but while copying_in). If it failed,
  // num_computed goes back to copy_base (the device's own match) and the rest is computed.
  std::uint64_t copy_batch = 0;
  std::int32_t copy_base = 0;
  bool running() const { return is_running(state); }
  // A row of it in a step in flight (tokens fed, a sample, drafts).
  bool has_rows_in_flight() const {
    return num_in_flight > 0 || samples_in_flight > 0 || drafts_in_flight;
  }
  bool unpreemptable() const {
    return state == seq_state::copying_in || state == seq_state::resuming;
  }
  std::int32_t max_total = 0;            // min(prompt + max_tokens, max_model_len)
  std::int32_t cached_tokens = 0;        // prompt tokens reused at first admission (usage)
  bool admitted_once = false;
  std::vector<msg::token_logprob> prompt_logprobs;  // collected for prompt positions 0..n-1
  bool prompt_logprobs_sent = false;
  // A start carried req.sampling to the engine, which keeps it until the sequence ends (a
  // preempted sequence keeps it too: preemption does not end it there).
  bool sampling_sent = false;
  bool wants_prompt_logprobs() const { return req.sampling.prompt_logprobs >= 0; }
  std::uint64_t admit_order = 0;         // larger: started more recently (preempted first)
  // A plan carried its msg::sequence_start (slots, penalty list) since it was last admitted:
  // the engine keeps it until the sequence ends or is preempted; preemption clears this.
  bool started = false;

  request_timing timing;  // for its summary's latencies

  // Prompt lookup, adapted to how well drafts do for this request.
  draft_state drafts;

  std::int32_t next_pos() const { return num_computed + num_in_flight; }
  std::int32_t num_output() const {
    return static_cast<std::int32_t>(tokens.size()) - num_prompt;
  }
  bool penalised() const { return msg::penalised(req.sampling); }
  // Its copy batch answered: copying_in becomes resuming; failed, what the copies were to bring
  // is computed instead, from copy_base (a hybrid's state too: from position 0, its copy_base).
  void copied_in(bool ok) {
    copy_batch = 0;
    state = seq_state::resuming;
    if (ok) return;
    num_computed = copy_base;
    num_in_cache = std::min(num_in_cache, copy_base);
    state_copied = false;
  }
  // Preempted (its blocks released): waiting again with nothing computed, cached or in flight,
  // its slots given back (recomputed from position 0 in whichever it takes next), not started
  // on the engine; the results of its rows in flight are dropped (epoch).
  void requeue() {
    started = false;
    recurrent.reset();
    lora.reset();
    num_computed = num_in_cache = num_in_flight = samples_in_flight = 0;
    drafts_in_flight = false;
    ++epoch;
    state = seq_state::waiting;
  }
};

// A new sequence for submit s, waiting: its tokens the prompt, its limit min(prompt +
// max_tokens, max_model_len), its group its own id unless s names one, its arrival s's (else
// now_ns), and, when s has no seed, the next of `seeds`' splitmix64 stream.
std::unique_ptr<sequence> make_sequence(msg::submit s, std::uint64_t& seeds,
                                        std::int32_t max_model_len, std::int64_t now_ns);

// Invariant check (std::logic_error): s holds what its state allows (the diagram above). Queued:
// nothing on the device nor in flight, host blocks exactly for its swapped tokens (a hybrid's
// with its state row). Loading: no blocks. Running: blocks covering its tokens in flight, no
// host blocks or pins, a copy batch exactly while copying_in, at most `steps_in_flight` samples
// in flight. `recurrent`: a hybrid model's sequence.
void check_holdings(const sequence& s, std::int32_t block_size, bool recurrent,
                    std::int32_t steps_in_flight);

}  // namespace courier::actors
