#include "actors/engine/sequence_sampling.hpp"

#include <stdexcept>
#include <string>

namespace courier::actors {

void sequence_sampling::fill(msg::plan_row& row) {
  if (!row.sample) return;
  if (row.carries_sampling) {
    msg::sampling_params& p = row.sampling;
    if (p.logit_bias_tokens.empty()) {
      bias_.erase(row.seq);
    } else {
      bias_[row.seq] = kept_bias{std::move(p.logit_bias_tokens), std::move(p.logit_bias_values)};
      p.logit_bias_tokens.clear();
      p.logit_bias_values.clear();
    }
    params_[row.seq] = p;
    return;
  }
  auto it = params_.find(row.seq);
  if (it == params_.end()) {
    throw std::invalid_argument("step plan: sequence " + std::to_string(row.seq) +
                                " samples, and no row has carried its sampling parameters");
  }
  row.sampling = it->second;
}

const kept_bias* sequence_sampling::bias(msg::request_id seq) const {
  auto it = bias_.find(seq);
  return it == bias_.end() ? nullptr : &it->second;
}

void sequence_sampling::release(const std::vector<msg::request_id>& ended) {
  for (const msg::request_id id : ended) {
    params_.erase(id);
    bias_.erase(id);
  }
}

}  // namespace courier::actors
