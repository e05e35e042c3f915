#pragma once
// The KV block pool: which blocks are free and how many holders each used block has. The only
// code in courier that changes a reference count; everything else holds references through
// `block_refs` (block_refs.hpp), which calls inc_ref/dec_ref here.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "cache/types.hpp"

namespace courier::cache {

// Invariants:
// - every block id in [0, num_total()) is either free (reference count 0, on the free list
//   exactly once) or used (reference count >= 1, not on the free list);
// - num_free() + num_used() == num_total().
// Misuse (a reference on a free block, dropping one that is not held, an unknown id) throws
// std::logic_error: it is a bug in the caller, and continuing would lose or double-free a block.
class block_pool {
 public:
  explicit block_pool(std::int32_t num_blocks);

  block_pool(const block_pool&) = delete;
  block_pool& operator=(const block_pool&) = delete;

  // n free blocks, each with reference count 1 (held by the caller), or nothing at all when
  // fewer than n are free: never a partial allocation. Lowest ids first on a fresh pool.
  [[nodiscard]] std::optional<std::vector<block_id>> allocate(std::size_t n);

  // One more holder of a used block.
  void inc_ref(block_id block) {
    std::int32_t& count = ref_counts_[index_of(block)];
    if (count == 0) misuse("inc_ref on free block", block);
    ++count;
  }
  // One holder fewer; at zero the block is free again.
  void dec_ref(block_id block) {
    std::int32_t& count = ref_counts_[index_of(block)];
    if (count == 0) misuse("dec_ref on free block (double free)", block);
    if (--count == 0) free_.push_back(block);
  }

  std::int32_t ref_count(block_id block) const { return ref_counts_[index_of(block)]; }
  bool is_free(block_id block) const { return ref_count(block) == 0; }

  std::size_t num_free() const { return free_.size(); }
  std::size_t num_used() const { return ref_counts_.size() - free_.size(); }
  std::size_t num_total() const { return ref_counts_.size(); }

  // Throws std::logic_error describing the first violated invariant.
  void check_invariants() const;

 private:
  std::size_t index_of(block_id block) const {
    if (block.value < 0 || static_cast<std::size_t>(block.value) >= ref_counts_.size()) {
      misuse("unknown block", block);
    }
    return static_cast<std::size_t>(block.value);
  }
  [[noreturn]] static void misuse(const char* what, block_id block);  // throws logic_error

  std::vector<std::int32_t> ref_counts_;  // by block id
  std::vector<block_id> free_;            // a stack: the next allocation pops from the back
};

}  // namespace courier::cache
