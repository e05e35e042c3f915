// Preemption: which running sequence gives up its blocks (victim_for, make_room), and what it
// leaves (preempt; where its KV goes: preempted_kv).
#include <algorithm>

#include "actors/scheduler/scheduler_core.hpp"

namespace courier::actors {

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
    if (ready_.recurrent && victim.has_rows_in_flight() && preempted_kv_.should_swap(victim) &&
        kv_.snapshots().host_state_row_available()) {
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
  if (snapshots_on()) answers_.cache_computed(s);
  snaps_.drop(s);
  s.copy_batch = 0;
  // A hybrid swaps only with no row in flight: make_room lets such a victim drain first.
  if (preempted_kv_.give_up(s)) {
    swapped_out_.push_back(s.req.id);  // its copies out wait for the next plan (swapping_out)
  }
  preempted_.push_back(s.req.id);  // the engine drops its device state; the next rows resend it
  s.requeue();
  running_.erase(std::find(running_.begin(), running_.end(), s.req.id));
  waiting_.push_front(s.req.id);
  ++stats_.num_preemptions;
}

}  // namespace courier::actors
