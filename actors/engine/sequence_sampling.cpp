#include "actors/engine/sequence_sampling.hpp"

#include <stdexcept>
#include <string>

namespace courier::actors {

void sequence_sampling::fill(msg::plan_row& row) {
  if (!row.sample) return;
  if (row.carries_sampling) {
    params_[row.seq] = row.sampling;
    return;
  }
  auto it = params_.find(row.seq);
  if (it == params_.end()) {
    throw std::invalid_argument("step plan: sequence " + std::to_string(row.seq) +
                                " samples, and no row has carried its sampling parameters");
  }
  row.sampling = it->second;
}

void sequence_sampling::release(const std::vector<msg::request_id>& ended) {
  for (const msg::request_id id : ended) params_.erase(id);
}

}  // namespace courier::actors
