// Preemption: which running sequence gives up its blocks (victim_for, make_room), and whether it
// keeps its KV (and a hybrid its recurrent state) in the host tier or recomputes it later
// (should_swap, preempt).
#include <algorithm>
#include <optional>

#include "actors/scheduler/preemption_cost.hpp"
#include "actors/scheduler/scheduler_core.hpp"

namespace courier::actors {

// Whether a preempted sequence's KV is swapped out rather than recomputed: by the mode, and in
// auto by the estimated costs (preemption_cost.hpp).
bool scheduler_core::should_swap(const sequence& s) const {
  using mode = scheduler_options::preemption_mode;
  // A hybrid swaps only once its rows in flight have answered (make_room): count their tokens.
  const std::int32_t computed = s.num_computed + (ready_.recurrent ? s.num_in_flight : 0);
  if (kv_.num_host_blocks() == 0 || computed == 0 || opts_.preemption == mode::recompute) {
    return false;
  }
  if (opts_.preemption == mode::swap) return true;
  const std::int32_t bs = kv_.block_size();
  // A hybrid recomputes from the deepest snapshot its prefix has, not from its cached blocks.
  const std::int32_t cached =
      ready_.recurrent ? kv_.snapshot_depth(s.blocks, s.num_computed) : s.num_in_cache;
  const preemption_cost c = estimate_preemption(ready_, computed, cached, (computed + bs - 1) / bs);
  return c.swap_s < c.recompute_s;
}

// The sequence to preempt for s's blocks: the most recently started running one that is not
// resuming with copies back (its blocks are not free before the copies are done, and one
// preempted again before its first row could be again and again, never going on) nor, with
// `planned`, given a row in this plan already; or s itself when it comes first.
sequence& scheduler_core::victim_for(sequence& s, const std::vector<fed_row>* planned) {
  for (auto it = running_.rbegin(); it != running_.rend(); ++it) {
    sequence& v = *seqs_.at(*it);
    if (&v == &s) return s;
    const bool has_row =
        planned && std::any_of(planned->begin(), planned->end(),
                               [&](const fed_row& f) { return f.seq == v.req.id; });
    if (!has_row && !v.unpreemptable() && !draining(v)) return v;
  }
  return s;
}

// Blocks for s's tokens up to `upto`, preempting victims (victim_for) while they are short;
// false: s gets no row this step, because it was the victim itself or because the victim (s
// too) is a hybrid that would swap but has a row in flight (whose state would run past what it
// computed): that one drains first, getting no row in this plan, and is a victim with nothing
// in flight at the next (draining, cleared at each plan).
bool scheduler_core::make_room(sequence& s, std::int32_t upto,
                               const std::vector<fed_row>* planned) {
  while (!ensure_blocks(s, upto)) {
    sequence& victim = victim_for(s, planned);
    if (ready_.recurrent && in_flight(victim) && should_swap(victim) &&
        kv_.host_state_row_available()) {
      draining_.push_back(victim.req.id);
      ++stats_.swap_drains;
      return false;
    }
    preempt(victim);
    if (&victim == &s) return false;
  }
  return true;
}

void scheduler_core::preempt(sequence& s) {
  // A hybrid keeps what it computed, with the snapshots that hold, for when it is back.
  if (snapshots_on()) cache_computed_blocks(s);
  snaps_.drop(s);
  const std::int32_t bs = kv_.block_size();
  const std::int32_t keep = (s.num_computed + bs - 1) / bs;
  // Blocks still being copied in hold nothing yet: such a sequence is recomputed.
  const bool copying = s.state == seq_state::copying_in;
  s.copy_batch = 0;
  // A hybrid swaps only with a host row for its recurrent state, copied out with its KV (after
  // the steps before, which write it; before any row of the next step, which may reuse its
  // slot), and only with no row in flight: such a row moves its state past num_computed (and a
  // decode row's sampled token, which gives that state its meaning, is dropped). make_room
  // lets such a victim drain first.
  std::optional<std::int32_t> state_row;
  bool swap = !copying && should_swap(s);
  if (swap && ready_.recurrent) swap = !in_flight(s);
  if (swap && ready_.recurrent) {
    state_row = kv_.take_host_state_row();
    swap = state_row.has_value();
  }
  if (swap && kv_.swap_out(s.blocks, keep, s.swapped)) {
    if (state_row) {
      kv_.copy_state(true, s.recurrent.index(), *state_row);
      s.swapped_state = *state_row;
    }
    s.swapped_tokens = s.num_computed;
    // Its copies out wait for the next plan (which makes it swapping_out).
    swapped_out_.push_back(s.req.id);
    ++stats_.swap_outs;
    stats_.swapped_out_blocks += static_cast<std::uint64_t>(keep);
  } else {
    if (state_row) kv_.give_back_host_state_row(*state_row);
    ++stats_.recompute_preemptions;
  }
  kv_.release(s.blocks);  // a step in flight may still write them: it runs before any later step
  preempted_.push_back(s.req.id);  // the engine drops its device state; the next rows resend it
  s.requeue();
  running_.erase(std::find(running_.begin(), running_.end(), s.req.id));
  waiting_.push_front(s.req.id);
  ++stats_.num_preemptions;
}

}  // namespace courier::actors
