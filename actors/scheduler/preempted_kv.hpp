#pragma once
// Where a preempted sequence's KV goes (cache.preemption): into the host tier, with a hybrid's
// recurrent state, to be swapped back in when it is admitted again, or dropped to be recomputed.
// The choice (should_swap) is by the mode and, in auto, by the estimated costs of copying out
// and back against recomputing (preemption_cost.hpp); the swap itself goes through kv_manager.
// Which sequence is preempted, and its queues, are the scheduler core's.
#include <cstdint>

#include "actors/scheduler/kv_manager.hpp"
#include "actors/scheduler/sequence.hpp"
#include "messages/step.hpp"

namespace courier::actors {

// cache.preemption: auto (by the costs), swap (whenever the host tier has room), recompute.
enum class preemption_mode : std::uint8_t { automatic, swap, recompute };

class preempted_kv {
 public:
  // `kv` and `stats` (the scheduler's, counted into: swap-outs, blocks, recomputes) outlive
  // this; `ready`: the engine's shape, for the costs.
  preempted_kv(kv_manager& kv, msg::scheduler_stats& stats, const msg::engine_ready& ready,
               preemption_mode mode);

  // Whether s's KV would be swapped out rather than recomputed.
  bool should_swap(const sequence& s) const;
  // s gives up its device blocks. Swapped out (true) when should_swap says so, it is not still
  // copying in, and the host tier has room (a hybrid also needs a host state row and no row in
  // flight, whose state would run past what it computed): s.swapped, s.swapped_state and
  // s.swapped_tokens then hold its computed blocks and state, whose copies out the next plan
  // carries. Else (false) they are dropped, to be recomputed.
  bool give_up(sequence& s);
  // The step that carried s's copies out has answered: s waits to be admitted again, its
  // swapped blocks and state kept (ok) or, when the step failed, given up to be recomputed.
  void swap_answered(sequence& s, bool ok);

 private:
  kv_manager& kv_;
  msg::scheduler_stats& stats_;
  const msg::engine_ready& ready_;
  preemption_mode mode_;
};

}  // namespace courier::actors
