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

// The logit bias is kept apart: a row's sampling gets the parameters without it (so a request
// with 300 bias entries costs no copy per step), and the bias is read here, when the device's
// copy of it is written (once per sequence slot, engine/token_slots).
struct kept_bias {
  std::vector<msg::token_id> tokens;
  std::vector<float> values;
};

class sequence_sampling {
 public:
  // Keeps the parameters a row carries, or gives a sampling row that carries none its
  // sequence's; either way the row's sampling ends up without the logit bias (bias() has it).
  // Throws std::invalid_argument, leaving the row as it was, for a sampling row of a sequence
  // whose parameters never came (a protocol error: the scheduler and the engine disagree).
  void fill(msg::plan_row& row);
  // The sequence's logit bias; null when it has none (or is unknown).
  const kept_bias* bias(msg::request_id seq) const;
  // Forgets ended sequences (unknown ids are ignored).
  void release(const std::vector<msg::request_id>& ended);
  std::size_t num_sequences() const { return params_.size(); }

 private:
  std::unordered_map<msg::request_id, msg::sampling_params> params_;  // without the bias
  std::unordered_map<msg::request_id, kept_bias> bias_;               // non-empty ones only
};

}  // namespace courier::actors
