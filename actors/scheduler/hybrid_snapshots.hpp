#pragma once
// A hybrid model's prefix caching on the scheduler's side: where a sequence resumes (the deepest
// cached prefix with a snapshot of its recurrent state), where it takes snapshots (the prompt's
// last block boundary, checkpoints through a long prefill, the point where it left a stored
// path, and decode-time block boundaries for the conversation's next turn), and how they reach
// the prefix cache. The policy is here; cache/snapshot_index keeps them (behind kv_manager) and
// snapshot_policy.hpp chooses what goes. The scheduler core calls it at each of a sequence's
// moves: admitted (note_resume, plan_checkpoints), planned (cut_at_checkpoint, snapshot_row),
// answered (row_answered), cached (keep), preempted or ended (drop).
#include <cstdint>

#include "actors/scheduler/kv_manager.hpp"
#include "actors/scheduler/sequence.hpp"
#include "messages/step.hpp"

namespace courier::actors {

class hybrid_snapshots {
 public:
  // `stats`: the scheduler's, whose snapshot counters this counts into; both outlive this.
  hybrid_snapshots(kv_manager& kv, msg::scheduler_stats& stats, std::int32_t checkpoint_tokens,
                   bool decode_snapshots);

  // Whether the model keeps snapshots at all (snapshot rows configured; fixed at start).
  bool on() const { return on_; }
  // The snapshot index's clock: one tick per lookup or insert (recency for the policy).
  std::uint64_t tick() { return ++clock_; }
  // Snapshot rows that pending decode-time (tail) snapshots hold.
  std::int32_t tail_rows() const { return tail_rows_; }
  // Invariant check (std::logic_error): every snapshot row is free, kept, or being taken by one
  // of `running` (none twice), and the tail rows counted are those being taken.
  void check_rows(const std::vector<const sequence*>& running) const;

  // Admitted from `at`: counted as a hit by kind, or a miss.
  void note_resume(const resume_point& at);
  // The depths it snapshots at while it computes its prompt from at.tokens, less the kinds this
  // workload seldom resumes from.
  void plan_checkpoints(sequence& s, const resume_point& at);
  // A prefill row of n tokens from next_pos(), cut to end at the next checkpoint.
  std::int32_t cut_at_checkpoint(const sequence& s, std::int32_t n) const;
  // A row of n tokens just planned: a snapshot row to take at its end (row.state_snapshot),
  // returned, or -1.
  std::int32_t snapshot_row(sequence& s, msg::plan_row& row, std::int32_t n);
  // A row of s answered: the snapshot it restored (`restored`) may go from here; the one it
  // wrote into `slot` (-1: none) is taken if the state it was planned for stands (`stands`: no
  // drafts, or all of them accepted; a newer tail replaces older ones), else lost (the slot
  // goes back).
  void row_answered(sequence& s, bool restored, std::int32_t slot, bool stands);
  // Its blocks went into the prefix cache (in namespace ns): the snapshots they cover go too.
  void keep(sequence& s, const prefix_namespace& ns);
  // It stops running (ended or preempted): its pin and the rows it was taking go.
  void drop(sequence& s);

 private:
  void taken(sequence& s, std::int32_t slot);
  void lost(sequence& s, std::int32_t slot);
  void unpin_restore(sequence& s);
  void forget_pending(const pending_snapshot& p);

  kv_manager& kv_;
  bool on_;
  msg::scheduler_stats& stats_;
  std::int32_t checkpoint_tokens_;
  bool decode_snapshots_;
  std::uint64_t clock_ = 0;
  std::int32_t tail_rows_ = 0;
};

}  // namespace courier::actors
