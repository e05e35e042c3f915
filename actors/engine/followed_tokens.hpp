#pragma once
// The engine's half of planning ahead (scheduler.overlap): where the token each sequence was
// sampled in the step launched last lies on the device, so that a row planned while that step
// ran ("follows", its one token a placeholder) is fed that token on the device, before the step
// has even finished (model::forward_row::feed_from). Steps launch in plan order, so the step
// before is always the one the row follows.
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "messages/step.hpp"

namespace courier::actors {

// A row taken out of a plan: where it was, and its sequence.
struct removed_row {
  std::size_t index = 0;
  msg::request_id seq = 0;
};

class followed_tokens {
 public:
  // Gives each following row of `plan` the sampled position it is fed from (feeds[i] for the
  // plan's row i after removal; -1 for a row that is not following) and removes the rows that
  // cannot have one: the step before failed to launch or sampled nothing for the sequence (the
  // scheduler has then ended it). Returns the removed rows, by ascending index in the original
  // plan.
  std::vector<removed_row> resolve(msg::step_plan& plan, std::vector<std::int32_t>& feeds) const;
  // Remembers the sampled position of every row of a plan just launched that samples one token
  // (rows verifying drafts are never followed); forgets the step before.
  void launched(const msg::step_plan& plan);
  // After a launch that failed, or launched nothing: no row can follow it.
  void forget() { position_.clear(); }

 private:
  std::unordered_map<msg::request_id, std::int32_t> position_;
};

// Puts an empty row result back where each removed row was, so the result's rows are in the
// order of the plan the scheduler sent (a failed step's result has no rows and stays so).
void restore_removed_rows(msg::step_result& result, const std::vector<removed_row>& removed);

}  // namespace courier::actors
