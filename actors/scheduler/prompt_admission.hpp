#pragma once
// How a waiting sequence gets its first blocks when the scheduler admits it (plan()'s third
// phase): back from the host tier after a swap out, or its prompt looked up in the caches
// (kv_manager::resume: the device's prefix, a hybrid's snapshot, the host tier's blocks, a
// deeper detached snapshot) and fresh blocks taken for its first chunk. All or nothing: when the
// blocks cannot be had, the sequence holds nothing it did not hold before and nothing is
// counted. What the core does with an admitted sequence (its slots, its queue) is not here.
#include <cstdint>

#include "actors/scheduler/hybrid_snapshots.hpp"
#include "actors/scheduler/kv_manager.hpp"
#include "actors/scheduler/scheduler_report.hpp"
#include "actors/scheduler/sequence.hpp"
#include "actors/scheduler/step_flight.hpp"
#include "messages/step.hpp"

namespace courier::actors {

class prompt_admission {
 public:
  // Each outlives this; `stats` and `report` are the scheduler's, counted into (host and disk
  // tier hits, blocks swapped in, prefix lookups). `recurrent`: the model keeps recurrent state.
  prompt_admission(kv_manager& kv, hybrid_snapshots& snaps, const copy_batches& copies,
                   msg::scheduler_stats& stats, scheduler_report& report, bool recurrent);

  // Admits s (in prefix namespace `ns`) with at most `budget` tokens of its first chunk. True:
  // it holds the blocks of what it reuses and of that chunk, `fed` is the chunk's tokens, or 0
  // when blocks are copied back from the host tier first (s.copy_batch then names the batch the
  // next plan opens: copies.next()). False: nothing held, nothing counted.
  bool admit(sequence& s, const prefix_namespace& ns, std::int32_t budget, std::int32_t& fed);

 private:
  bool admit_swapped(sequence& s, std::int32_t budget, std::int32_t& fed);
  kv_manager::prompt_resume look_up(sequence& s, const prefix_namespace& ns);
  void take_admitted(sequence& s, kv_manager::prompt_resume& l, cache::block_refs fresh,
                     std::int32_t host);

  kv_manager& kv_;
  hybrid_snapshots& snaps_;
  const copy_batches& copies_;
  msg::scheduler_stats& stats_;
  scheduler_report& report_;
  bool recurrent_;
};

}  // namespace courier::actors
