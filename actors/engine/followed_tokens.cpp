#include "actors/engine/followed_tokens.hpp"

#include <algorithm>
#include <iterator>

namespace courier::actors {

std::vector<removed_row> followed_tokens::resolve(msg::step_plan& plan) const {
  std::vector<removed_row> removed;
  std::vector<msg::plan_row> kept;
  kept.reserve(plan.rows.size());
  for (std::size_t i = 0; i < plan.rows.size(); ++i) {
    msg::plan_row& row = plan.rows[i];
    if (row.follows) {
      auto it = last_.find(row.seq);
      if (it == last_.end() || row.tokens.size() != 1) {
        removed.push_back({i, row.seq});
        continue;
      }
      row.tokens[0] = it->second;
    }
    kept.push_back(std::move(row));
  }
  plan.rows = std::move(kept);
  return removed;
}

void followed_tokens::record(const msg::step_result& result) {
  last_.clear();
  if (result.error != msg::error_code::none) return;
  for (const msg::row_result& r : result.rows) {
    if (!r.tokens.empty()) last_[r.seq] = r.tokens.back();
  }
}

void restore_removed_rows(msg::step_result& result, const std::vector<removed_row>& removed) {
  if (removed.empty() || result.error != msg::error_code::none) return;
  for (const removed_row& r : removed) {  // ascending: each lands where it was
    msg::row_result empty;
    empty.seq = r.seq;
    const auto at = static_cast<std::ptrdiff_t>(std::min(r.index, result.rows.size()));
    result.rows.insert(result.rows.begin() + at, std::move(empty));
  }
}

}  // namespace courier::actors
