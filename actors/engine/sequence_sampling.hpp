#pragma once
// Each running sequence's sampling parameters on the engine's side: a plan sends them once, in
// the sequence's first sampling row (plan_row::carries_sampling), and every later sampling row of
// the sequence is given them here, so the step message does not carry a request's parameters
// (its logit bias, up to 300 entries, and grammar among them) every step. Forgotten when a plan
// lists the sequence in `ended`.
#include <cstddef>
#include <unordered_map>
#include <vector>

#include "messages/step.hpp"

namespace courier::actors {

class sequence_sampling {
 public:
  // Keeps the parameters a row carries, or gives a sampling row that carries none its
  // sequence's. Throws std::invalid_argument, leaving the row as it was, for a sampling row of a
  // sequence whose parameters never came (a protocol error: the scheduler and the engine
  // disagree).
  void fill(msg::plan_row& row);
  // Forgets ended sequences (unknown ids are ignored).
  void release(const std::vector<msg::request_id>& ended);
  std::size_t num_sequences() const { return params_.size(); }

 private:
  std::unordered_map<msg::request_id, msg::sampling_params> params_;
};

}  // namespace courier::actors
