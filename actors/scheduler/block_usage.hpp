#pragma once
// The KV cache usage gauge: the fraction of the device's blocks that some running sequence
// holds, each block counted once however many tables share it (blocks only the prefix cache
// holds can be reclaimed, so they do not count, as in vLLM's kv_cache_usage). A walk costs
// O(blocks held): a mark per block, no set.
#include <cstdint>
#include <vector>

#include "cache/block_refs.hpp"

namespace courier::actors {

class block_usage {
 public:
  // A new walk over a pool of num_blocks blocks.
  void begin(std::int32_t num_blocks) {
    if (marks_.size() != static_cast<std::size_t>(num_blocks)) {
      marks_.assign(static_cast<std::size_t>(num_blocks), 0);
    }
    num_blocks_ = num_blocks;
    held_ = 0;
    ++epoch_;
  }
  // The blocks of `table` this walk has not counted yet, counted.
  void add(const cache::block_refs& table) {
    for (const cache::block_id b : table.ids()) {
      std::uint32_t& m = marks_[static_cast<std::size_t>(b.value)];
      if (m != epoch_) {
        m = epoch_;
        ++held_;
      }
    }
  }
  // The blocks counted as a fraction of the pool's (0 for an empty pool).
  double fraction() const {
    return num_blocks_ > 0 ? static_cast<double>(held_) / num_blocks_ : 0.0;
  }

 private:
  std::vector<std::uint32_t> marks_;  // by block id: the walk that last counted it
  std::uint32_t epoch_ = 0;
  std::int32_t num_blocks_ = 0;
  std::int64_t held_ = 0;
};

}  // namespace courier::actors
