#pragma once
// A bounded, lock-free cache from short words to their BPE ids. Real text repeats its words,
// and a hit (one cache line) is several times cheaper than merging again.
//
// Direct-mapped: each slot holds one word of at most 16 bytes with at most 8 ids, guarded by a
// sequence counter (a seqlock). Readers never block and never see a torn entry: they retry
// nothing and treat a slot being written as a miss. A writer that finds the slot busy gives up.
// All fields are atomics, so concurrent use is free of data races. Memory: 4 MiB, fixed.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace courier::text {

class bpe_cache {
 public:
  static constexpr std::size_t max_word_bytes = 16;
  static constexpr std::size_t max_ids = 8;

  bpe_cache();

  // Appends the cached ids of `word` to `out` and returns true, or returns false.
  bool find(std::string_view word, std::uint64_t hash, std::vector<std::uint32_t>& out) const;
  // Remembers `ids` for `word` when both fit; may drop what the slot held.
  void insert(std::string_view word, std::uint64_t hash, const std::uint32_t* ids,
              std::size_t num_ids) const;

 private:
  struct alignas(64) slot {
    std::atomic<std::uint64_t> version{0};  // odd while being written
    std::atomic<std::uint64_t> meta{0};     // hash bits | word length << 8 | number of ids
    std::atomic<std::uint64_t> key[2] = {};
    std::atomic<std::uint64_t> ids[4] = {};
  };
  static constexpr std::size_t num_slots = 1 << 16;

  std::unique_ptr<slot[]> slots_;  // Owned; mutable through const methods by design
};

// The hash bpe_cache expects (any good 64-bit hash of the bytes would do).
std::uint64_t hash_bytes(std::string_view s);

}  // namespace courier::text
