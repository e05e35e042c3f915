#include "actors/engine/block_tables.hpp"

#include <stdexcept>
#include <string>

namespace courier::actors {

const std::vector<std::int32_t>& block_tables::apply(const msg::plan_row& row) {
  std::vector<std::int32_t>& t = tables_[row.seq];
  if (row.keep_blocks < 0 || static_cast<std::size_t>(row.keep_blocks) > t.size()) {
    const std::size_t have = t.size();
    if (have == 0) tables_.erase(row.seq);
    throw std::invalid_argument("step plan: sequence " + std::to_string(row.seq) + " keeps " +
                                std::to_string(row.keep_blocks) + " blocks of its table, the " +
                                "engine holds " + std::to_string(have));
  }
  t.resize(static_cast<std::size_t>(row.keep_blocks));
  t.insert(t.end(), row.new_blocks.begin(), row.new_blocks.end());
  return t;
}

void block_tables::release(const std::vector<msg::request_id>& ended) {
  for (const msg::request_id id : ended) tables_.erase(id);
}

const std::vector<std::int32_t>* block_tables::find(msg::request_id seq) const {
  auto it = tables_.find(seq);
  return it == tables_.end() ? nullptr : &it->second;
}

}  // namespace courier::actors
