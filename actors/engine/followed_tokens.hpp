#pragma once
// The engine's half of planning ahead (scheduler.overlap): the token it sampled for each
// sequence in the step it ran last, which a row planned while that step ran ("follows", its one
// token a placeholder) is fed. Steps run in plan order, so the step before is always that one.
#include <cstddef>
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
  // Gives each following row of `plan` its token and removes the rows that cannot have one (the
  // step before failed or sampled nothing for the sequence; the scheduler has then ended the
  // sequence). Returns the removed rows, by ascending index in the original plan.
  std::vector<removed_row> resolve(msg::step_plan& plan) const;
  // Remembers the last token of every sampled row of a step just run (none when it failed);
  // forgets the step before.
  void record(const msg::step_result& result);

 private:
  std::unordered_map<msg::request_id, msg::token_id> last_;
};

// Puts an empty row result back where each removed row was, so the result's rows are in the
// order of the plan the scheduler sent (a failed step's result has no rows and stays so).
void restore_removed_rows(msg::step_result& result, const std::vector<removed_row>& removed);

}  // namespace courier::actors
