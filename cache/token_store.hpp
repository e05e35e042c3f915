#pragma once
// One scope's part of the shared lookup cache: the tokens of earlier finished requests, oldest
// first, with an n-gram index so that a proposal never scans the store.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "cache/ngram_proposer.hpp"
#include "cache/types.hpp"

namespace courier::cache {

// The index is a hash chain, as in LZ77 compressors: head_ maps the hash of an n-gram of
// min_n tokens to the most recent position that followed it, and each stored position links
// to the previous one with the same hash. A proposal follows the chain from the most recent
// position, at most max_candidates steps: O(max_candidates * max_n + log sequences), whatever
// the store's size.
//
// Invariants:
// - size_bytes() == num_tokens() * bytes_per_token + num_sequences() * bytes_per_sequence
//   <= capacity_bytes();
// - every position in head_ or on a chain followed a min_n-gram with that hash and has at
//   least one token after it in its sequence; head_ holds no position of a dropped sequence
//   (chains may: a walk stops at the oldest live position).
class token_store {
 public:
  // What one stored token costs, as an upper estimate: the token, its chain link, and at most
  // one index entry (a node of libstdc++'s unordered_map with its bucket: about 40 bytes).
  static constexpr std::size_t bytes_per_token = sizeof(token_id) + sizeof(std::uint64_t) + 40;
  static constexpr std::size_t bytes_per_sequence = 64;

  token_store(ngram_config config, std::size_t capacity_bytes);

  // Stores a finished request's tokens (prompt and output) as its newest sequence, then drops
  // its oldest sequences until it fits. A sequence that cannot fit alone keeps its last tokens.
  void add(token_span tokens);

  // The tokens that followed the most recent stored occurrence of the longest suffix of
  // `history` with length in [min_n, max_n], at most max_len, never past the end of the stored
  // sequence; empty when there is none among the candidates tried.
  std::vector<token_id> propose(token_span history, std::size_t max_len) const;

  std::size_t capacity_bytes() const { return capacity_bytes_; }
  std::size_t size_bytes() const {
    return num_tokens_ * bytes_per_token + sequences_.size() * bytes_per_sequence;
  }
  std::size_t num_tokens() const { return num_tokens_; }
  std::size_t num_sequences() const { return sequences_.size(); }

  // Throws std::logic_error describing the first violated invariant. O(store size).
  void check_invariants() const;

 private:
  static constexpr std::uint64_t no_position = ~std::uint64_t{0};

  struct stored_sequence {
    std::uint64_t start = 0;  // absolute position of tokens[0]
    std::vector<token_id> tokens;
    std::vector<std::uint64_t> prev;  // by index: previous position with the same n-gram hash
  };

  std::uint64_t ngram_hash(const token_id* last_token_end) const;
  const stored_sequence& sequence_at(std::uint64_t position) const;
  void drop_oldest();

  ngram_config config_;
  std::size_t capacity_bytes_;
  std::deque<stored_sequence> sequences_;                  // oldest first; starts increase
  std::unordered_map<std::uint64_t, std::uint64_t> head_;  // n-gram hash -> latest position
  std::uint64_t next_start_ = 0;
  std::size_t num_tokens_ = 0;
};

}  // namespace courier::cache
