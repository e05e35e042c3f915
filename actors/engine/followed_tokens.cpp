#include "actors/engine/followed_tokens.hpp"

#include <algorithm>
#include <iterator>

namespace courier::actors {

std::vector<removed_row> followed_tokens::resolve(msg::step_plan& plan,
                                                  std::vector<std::int32_t>& feeds) const {
  std::vector<removed_row> removed;
  std::vector<msg::plan_row> kept;
  kept.reserve(plan.rows.size());
  feeds.clear();
  for (std::size_t i = 0; i < plan.rows.size(); ++i) {
    msg::plan_row& row = plan.rows[i];
    std::int32_t feed = -1;
    if (row.follows) {
      auto it = position_.find(row.seq);
      if (it == position_.end() || row.tokens.size() != 1) {
        removed.push_back({i, row.seq});
        continue;
      }
      feed = it->second;
    }
    kept.push_back(std::move(row));
    feeds.push_back(feed);
  }
  plan.rows = std::move(kept);
  return removed;
}

void followed_tokens::launched(const msg::step_plan& plan) {
  position_.clear();
  std::int32_t at = 0;  // sampled positions, counted over the rows in order
  for (const msg::plan_row& row : plan.rows) {
    if (!row.sample) continue;
    if (row.num_drafts == 0) position_[row.seq] = at;
    at += 1 + row.num_drafts;
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
