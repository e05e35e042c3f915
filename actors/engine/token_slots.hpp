#pragma once
// Each running sequence's slot in the model's per-sequence device state, kept across steps:
// - its next token (planning ahead, scheduler.overlap): every row that samples one token writes
//   it there right after sampling (model::forward_row::next_slot), and a row planned while that
//   step ran ("follows", its one token a placeholder) reads it (forward_row::token_slot) before
//   the step has even finished. Which row sampled what where in the step before never matters.
//   Steps launch in plan order, so the step before is always the one a row follows; the slot is
//   read only when that launch wrote it.
// - its block table (forward_row::table_slot): the device keeps the table, and each step writes
//   only the entries past those known to be there (table_keep). What is known to be there: what
//   a launch that succeeded wrote, cut to the entries each plan row keeps (a row taken out, or a
//   launch that failed, leaves entries that must be written again).
// - its logit bias (forward_row::bias_slot): written from the engine's copy of the sequence's
//   parameters by its first sampling row in the slot, read in place by every later one.
// - its penalty list (penalised sequences, forward_row::penalty_slot): written from the row
//   that carries it (plan_row::carries_penalties), then each sampled token is counted into it
//   on the device. A row uses the list only when a launch that succeeded wrote it.
// A sequence takes a slot at its first row (and its first after preemption) and gives it back
// when a plan lists it in `ended` or `preempted`.
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "actors/engine/block_tables.hpp"
#include "actors/engine/sequence_sampling.hpp"
#include "messages/step.hpp"

namespace courier::actors {

// A row taken out of a plan: where it was, and its sequence.
struct removed_row {
  std::size_t index = 0;
  msg::request_id seq = 0;
};

// A plan row's use of its sequence's slot: the slot its token is read from (-1: its tokens are
// the plan's), the slot its sample is written to (-1: none), the slot its block table is kept in
// (-1: none free, uploaded whole), how many of the table's entries are there already, the
// table's length, the slot whose penalty list it samples with (-1: none; a penalised row
// without one is a protocol error its step fails with), written from the row first when
// penalty_init, and the slot whose bias list it samples with (-1: none, its slice uploaded),
// written first when bias_init.
struct slot_use {
  std::int32_t read = -1;
  std::int32_t write = -1;
  std::int32_t table = -1;
  std::int32_t table_keep = 0;
  std::int32_t table_len = 0;
  std::int32_t penalties = -1;
  bool penalty_init = false;
  std::int32_t bias = -1;
  bool bias_init = false;
  bool first = false;  // the sequence took its slot at this row
};

class token_slots {
 public:
  // capacity: the model's token_slots() (twice the running sequences a step may have).
  explicit token_slots(std::int32_t capacity);

  // Gives each row of `plan` its slot use (uses[i] for the plan's row i after removal), a
  // sequence taking a free slot at its first row: its table is kept there (`tables` holds the
  // plan's tables, its differences applied); a following row reads its token there; a row that
  // samples one token (no drafts) writes its sample there. Removes the following rows whose
  // sequence's slot the step launched last did not write (it failed to launch, or did not sample
  // the sequence: the scheduler has then ended it). A sampling row with a logit bias (its own,
  // or the one `params` keeps for its sequence) samples with its slot's bias list. Returns the
  // removed rows, by ascending index in the original plan.
  std::vector<removed_row> resolve(msg::step_plan& plan, const block_tables& tables,
                                   std::vector<slot_use>& uses,
                                   const sequence_sampling* params = nullptr);
  // The plan (as resolved) was launched: the slots it writes are what the next plan may follow,
  // and its rows' tables are on the device.
  void launched(const msg::step_plan& plan, const std::vector<slot_use>& uses);
  // A launch failed, or launched nothing: no row can follow it.
  void forget() { written_.clear(); }
  // Sequences that ended (finished, cancelled, failed: the plan's `ended`) or were preempted
  // (its `preempted`) give their slots back.
  void release(const std::vector<msg::request_id>& seqs);
  std::size_t in_use() const { return slot_.size(); }

 private:
  std::unordered_map<msg::request_id, std::int32_t> slot_;
  std::vector<std::int32_t> free_;                // taken from the back
  // What a launch that succeeded left in a slot for its sequence (reset when a sequence takes
  // it): the table's leading entries, whether its penalty list and its bias are written.
  struct on_device {
    std::int32_t table = 0;
    bool penalties = false;
    bool bias = false;
  };
  std::vector<on_device> on_device_;  // by slot
  std::unordered_set<msg::request_id> written_;  // by the launch before
};

// Puts an empty row result back where each removed row was, so the result's rows are in the
// order of the plan the scheduler sent (a failed step's result has no rows and stays so).
void restore_removed_rows(msg::step_result& result, const std::vector<removed_row>& removed);

}  // namespace courier::actors
