#pragma once
// The BPE merge loop over one word, and the table of merge rules it reads.
//
// Semantics are Hugging Face's Word::merge_all: repeatedly apply the applicable merge of lowest
// rank, the leftmost one among equals, until none applies. Short words use a plain scan
// (quadratic, but faster than a heap below a few dozen symbols); longer ones a rank-ordered heap
// over a linked list, so a 1 MB word costs O(n log n).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace courier::text {

// (left id, right id) -> (rank, merged id), open addressing over a power-of-two array.
class merge_table {
 public:
  static constexpr std::uint32_t no_rank = 0xFFFFFFFFu;
  struct rule {
    std::uint32_t rank = no_rank;  // no_rank: the pair does not merge
    std::uint32_t merged_id = 0;
  };

  void reserve(std::size_t num_rules);
  // A later rule for the same pair replaces the earlier one, as in Hugging Face's loader.
  void insert(std::uint32_t left, std::uint32_t right, rule r);
  rule find(std::uint32_t left, std::uint32_t right) const {
    if (slots_.empty()) return {};
    const std::uint64_t key = pack(left, right);
    for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
      const slot& s = slots_[i];
      if (s.key == key) return s.value;
      if (s.key == empty) return {};
    }
  }
  std::size_t size() const { return size_; }

 private:
  static constexpr std::uint64_t empty = ~std::uint64_t{0};
  struct slot {
    std::uint64_t key = empty;
    rule value;
  };
  static std::uint64_t pack(std::uint32_t a, std::uint32_t b) {
    return (std::uint64_t{a} << 32) | b;
  }
  std::size_t slot_of(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_);
  }
  void grow();

  std::vector<slot> slots_;
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
  std::size_t size_ = 0;
};

// Merges `symbols` (token ids, left to right) in place.
void bpe_merge(std::vector<std::uint32_t>& symbols, const merge_table& merges);

// The two strategies, exposed so tests can hold them to each other.
void bpe_merge_scan(std::vector<std::uint32_t>& symbols, const merge_table& merges);
void bpe_merge_heap(std::vector<std::uint32_t>& symbols, const merge_table& merges);

}  // namespace courier::text
