#pragma once
// The engine's half of planning ahead (scheduler.overlap), on next-token slots: the model keeps
// on the device one slot per running sequence holding the token it sampled last (a row's
// model::forward_row::next_slot, written right after sampling), and a row planned while that
// step ran ("follows", its one token a placeholder) reads its token from the slot
// (forward_row::token_slot), before the step has even finished. Which row sampled what where in
// the step before never matters: a sequence's slot stays its own from its first sampling row to
// its end. Steps launch in plan order, so the step before is always the one a row follows; the
// slot is read only when that launch wrote it.
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "messages/step.hpp"

namespace courier::actors {

// A row taken out of a plan: where it was, and its sequence.
struct removed_row {
  std::size_t index = 0;
  msg::request_id seq = 0;
};

// A plan row's use of the slots: the slot its token is read from (-1: its tokens are the
// plan's) and the slot its sample is written to (-1: none).
struct slot_use {
  std::int32_t read = -1;
  std::int32_t write = -1;
};

class token_slots {
 public:
  // capacity: the model's token_slots() (twice the running sequences a step may have).
  explicit token_slots(std::int32_t capacity);

  // Gives each row of `plan` its slot use (uses[i] for the plan's row i after removal): a
  // following row reads its sequence's slot; a row that samples one token (no drafts) writes
  // its sequence's, a sequence taking a free slot the first time. Removes the following rows
  // whose sequence's slot the step launched last did not write (it failed to launch, or did not
  // sample the sequence: the scheduler has then ended it). Returns the removed rows, by ascending
  // index in the original plan.
  std::vector<removed_row> resolve(msg::step_plan& plan, std::vector<slot_use>& uses);
  // The plan (as resolved) was launched: the slots it writes are what the next plan may follow.
  void launched(const msg::step_plan& plan, const std::vector<slot_use>& uses);
  // A launch failed, or launched nothing: no row can follow it.
  void forget() { written_.clear(); }
  // Ended sequences (finished, cancelled, failed or preempted: the plan's `ended`) give their
  // slots back.
  void release(const std::vector<msg::request_id>& ended);
  std::size_t in_use() const { return slot_.size(); }

 private:
  std::unordered_map<msg::request_id, std::int32_t> slot_;
  std::vector<std::int32_t> free_;                // taken from the back
  std::unordered_set<msg::request_id> written_;  // by the launch before
};

// Puts an empty row result back where each removed row was, so the result's rows are in the
// order of the plan the scheduler sent (a failed step's result has no rows and stays so).
void restore_removed_rows(msg::step_result& result, const std::vector<removed_row>& removed);

}  // namespace courier::actors
