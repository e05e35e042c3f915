#include "actors/engine/token_slots.hpp"

#include <algorithm>
#include <iterator>

namespace courier::actors {

token_slots::token_slots(std::int32_t capacity)
    : on_device_(static_cast<std::size_t>(capacity > 0 ? capacity : 0)) {
  for (std::int32_t s = capacity - 1; s >= 0; --s) free_.push_back(s);  // slot 0 first
}

std::vector<removed_row> token_slots::resolve(msg::step_plan& plan, const block_tables& tables,
                                              std::vector<slot_use>& uses,
                                              const sequence_sampling* params) {
  std::vector<removed_row> removed;
  std::vector<msg::plan_row> kept;
  kept.reserve(plan.rows.size());
  uses.clear();
  for (std::size_t i = 0; i < plan.rows.size(); ++i) {
    msg::plan_row& row = plan.rows[i];
    auto it = slot_.find(row.seq);
    // A sequence takes a slot at its first row; a following row of one without a slot is taken
    // out below, so it takes none. Never empty: at most capacity / 2 run.
    const bool first = it == slot_.end() && !row.follows && !free_.empty();
    if (first) {
      it = slot_.emplace(row.seq, free_.back()).first;
      free_.pop_back();
      on_device_[static_cast<std::size_t>(it->second)] = {};
    }
    if (it != slot_.end()) {  // entries past those the row keeps changed: written again
      std::int32_t& on_device = on_device_[static_cast<std::size_t>(it->second)].table;
      on_device = std::min(on_device, std::max(row.keep_blocks, 0));
    }
    slot_use use;
    use.first = first;
    if (row.follows) {
      if (it == slot_.end() || !written_.count(row.seq) || row.tokens.size() != 1) {
        removed.push_back({i, row.seq});
        continue;
      }
      use.read = it->second;
    }
    if (it != slot_.end()) {
      if (row.sample && row.num_drafts == 0) use.write = it->second;
      const std::vector<std::int32_t>* table = tables.find(row.seq);
      use.table = it->second;
      const on_device& there = on_device_[static_cast<std::size_t>(it->second)];
      use.table_keep = there.table;
      use.table_len = table ? static_cast<std::int32_t>(table->size()) : 0;
      use.table_keep = std::min(use.table_keep, use.table_len);
      const bool biased = !row.sampling.logit_bias_tokens.empty() ||
                          (params && params->bias(row.seq) != nullptr);
      if (row.sample && biased) {
        use.bias = it->second;
        use.bias_init = !there.bias;
      }
      if (row.sample && msg::penalised(row.sampling)) {
        use.penalty_init = row.carries_penalties;
        if (use.penalty_init || there.penalties) {
          use.penalties = it->second;
        }
      }
    }
    kept.push_back(std::move(row));
    uses.push_back(use);
  }
  plan.rows = std::move(kept);
  return removed;
}

void token_slots::launched(const msg::step_plan& plan, const std::vector<slot_use>& uses) {
  written_.clear();
  for (std::size_t i = 0; i < plan.rows.size() && i < uses.size(); ++i) {
    if (uses[i].write >= 0) written_.insert(plan.rows[i].seq);
    const slot_use& u = uses[i];
    if (u.table >= 0) on_device_[static_cast<std::size_t>(u.table)].table = u.table_len;
    if (u.penalty_init) on_device_[static_cast<std::size_t>(u.penalties)].penalties = true;
    if (u.bias_init) on_device_[static_cast<std::size_t>(u.bias)].bias = true;
  }
}

void token_slots::release(const std::vector<msg::request_id>& seqs) {
  for (const msg::request_id seq : seqs) {
    auto it = slot_.find(seq);
    if (it == slot_.end()) continue;
    free_.push_back(it->second);
    slot_.erase(it);
    written_.erase(seq);
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
