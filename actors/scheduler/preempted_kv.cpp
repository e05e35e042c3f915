#include "actors/scheduler/preempted_kv.hpp"

#include <optional>
#include <utility>

#include "actors/scheduler/preemption_cost.hpp"

namespace courier::actors {

preempted_kv::preempted_kv(kv_manager& kv, msg::scheduler_stats& stats,
                           const msg::engine_ready& ready, preemption_mode mode)
    : kv_(kv), stats_(stats), ready_(ready), mode_(mode) {}

bool preempted_kv::should_swap(const sequence& s) const {
  // A hybrid swaps only once its rows in flight have answered (make_room): count their tokens.
  const std::int32_t computed = s.num_computed + (ready_.recurrent ? s.num_in_flight : 0);
  if (kv_.host().num_blocks() == 0 || computed == 0 || mode_ == preemption_mode::recompute) {
    return false;
  }
  if (mode_ == preemption_mode::swap) return true;
  const std::int32_t bs = kv_.block_size();
  // A hybrid recomputes from the deepest snapshot its prefix has, not from its cached blocks.
  const std::int32_t cached =
      ready_.recurrent ? kv_.snapshots().snapshot_depth(s.blocks, s.num_computed) : s.num_in_cache;
  const preemption_cost c = estimate_preemption(ready_, computed, cached, (computed + bs - 1) / bs);
  return c.swap_s < c.recompute_s;
}

bool preempted_kv::give_up(sequence& s) {
  const std::int32_t bs = kv_.block_size();
  const std::int32_t keep = (s.num_computed + bs - 1) / bs;
  // Blocks still being copied in hold nothing yet: such a sequence is recomputed. A hybrid's
  // state is copied out with its KV (after the steps before, which write it; before any row of
  // the next step, which may reuse its slot).
  std::optional<std::int32_t> state_row;
  bool swap = s.state != seq_state::copying_in && should_swap(s);
  if (swap && ready_.recurrent) swap = !s.has_rows_in_flight();
  if (swap && ready_.recurrent) {
    state_row = kv_.snapshots().take_host_state_row();
    swap = state_row.has_value();
  }
  swap = swap && kv_.host().swap_out(s.blocks, keep, s.swapped);
  if (swap) {
    if (state_row) {
      kv_.snapshots().copy_state(true, s.recurrent.index(), *state_row);
      s.swapped_state = *state_row;
    }
    s.swapped_tokens = s.num_computed;
    ++stats_.swap_outs;
    stats_.swapped_out_blocks += static_cast<std::uint64_t>(keep);
  } else {
    if (state_row) kv_.snapshots().give_back_host_state_row(*state_row);
    ++stats_.recompute_preemptions;
  }
  kv_.release(s.blocks);  // a step in flight may still write them: it runs before any later step
  return swap;
}

void preempted_kv::swap_answered(sequence& s, bool ok) {
  s.state = seq_state::waiting;
  if (ok) return;
  s.swapped.release();
  s.swapped_tokens = 0;
  kv_.snapshots().give_back_host_state_row(std::exchange(s.swapped_state, -1));
}

}  // namespace courier::actors
