#include "cache/block_pool.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace courier::cache {

block_pool::block_pool(std::int32_t num_blocks) {
  if (num_blocks < 0) throw std::invalid_argument("block_pool: negative number of blocks");
  ref_counts_.assign(static_cast<std::size_t>(num_blocks), 0);
  free_.reserve(static_cast<std::size_t>(num_blocks));
  for (std::int32_t id = num_blocks - 1; id >= 0; --id) free_.push_back(block_id{id});
}

std::optional<std::vector<block_id>> block_pool::allocate(std::size_t n) {
  if (n > free_.size()) return std::nullopt;
  std::vector<block_id> blocks(free_.end() - static_cast<std::ptrdiff_t>(n), free_.end());
  free_.resize(free_.size() - n);
  // The stack's back is the lowest id; hand out lowest first.
  std::reverse(blocks.begin(), blocks.end());
  for (block_id b : blocks) ref_counts_[static_cast<std::size_t>(b.value)] = 1;
  return blocks;
}

void block_pool::misuse(const char* what, block_id block) {
  throw std::logic_error(std::string("block_pool: ") + what + ", block " +
                         std::to_string(block.value));
}

void block_pool::check_invariants() const {
  std::vector<bool> on_free_list(ref_counts_.size(), false);
  for (block_id b : free_) {
    const std::size_t i = index_of(b);
    if (on_free_list[i]) {
      throw std::logic_error("block_pool: block " + std::to_string(b.value) +
                             " is on the free list twice");
    }
    on_free_list[i] = true;
    if (ref_counts_[i] != 0) {
      throw std::logic_error("block_pool: block " + std::to_string(b.value) +
                             " is free and referenced (count " + std::to_string(ref_counts_[i]) +
                             ")");
    }
  }
  for (std::size_t i = 0; i < ref_counts_.size(); ++i) {
    if (ref_counts_[i] < 0) {
      throw std::logic_error("block_pool: block " + std::to_string(i) +
                             " has a negative reference count");
    }
    if (ref_counts_[i] == 0 && !on_free_list[i]) {
      throw std::logic_error("block_pool: block " + std::to_string(i) +
                             " has no holder but is not free (lost)");
    }
  }
}

}  // namespace courier::cache
