#pragma once
// What a prefix-cache lookup (or pin) found: the matched full blocks, each with one reference
// taken for the holder of this object. Move-only through its block_refs.
#include <cstddef>
#include <utility>
#include <vector>

#include "cache/block_refs.hpp"
#include "cache/types.hpp"

namespace courier::cache {

// A match ends in exactly one of two ways:
// - take_blocks(): the references become the first entries of the sequence's block table (the
//   prefix is reused; a lookup's counters stand);
// - prefix_cache::release_matched(): the references are dropped (a rollback: a lookup's
//   counters are taken back, since nothing was reused).
// Destroying a match that was neither taken nor released drops its references (no leak), but
// leaves a lookup counted; the scheduler releases explicitly.
//
// Invariants: blocks() are the tree's blocks for tokens [0, num_tokens()) at the time of the
// match, in order; num_tokens() == (blocks taken or held) * block_size.
class prefix_match {
 public:
  enum class origin { lookup, pin };

  prefix_match() = default;
  // A moved-from match is spent: it holds nothing and counts as taken, so it can never be
  // rolled back twice.
  prefix_match(prefix_match&& other) noexcept
      : blocks_(std::move(other.blocks_)),
        num_tokens_(other.num_tokens_),
        num_query_tokens_(other.num_query_tokens_),
        origin_(other.origin_),
        taken_(std::exchange(other.taken_, true)) {}
  prefix_match& operator=(prefix_match&& other) noexcept {
    if (this != &other) {
      blocks_ = std::move(other.blocks_);
      num_tokens_ = other.num_tokens_;
      num_query_tokens_ = other.num_query_tokens_;
      origin_ = other.origin_;
      taken_ = std::exchange(other.taken_, true);
    }
    return *this;
  }
  prefix_match(block_refs blocks, std::size_t block_size, std::size_t num_query_tokens, origin from)
      : blocks_(std::move(blocks)),
        num_tokens_(blocks_.size() * block_size),
        num_query_tokens_(num_query_tokens),
        origin_(from) {}

  // The matched blocks still held by this match (empty once taken).
  const std::vector<block_id>& blocks() const { return blocks_.ids(); }
  // Tokens matched, a multiple of the block size; unchanged by take_blocks().
  std::size_t num_tokens() const { return num_tokens_; }
  // Tokens the lookup was asked about.
  std::size_t num_query_tokens() const { return num_query_tokens_; }
  origin from() const { return origin_; }
  bool taken() const { return taken_; }

  // The references on the matched blocks, handed to the caller; the match then holds none.
  [[nodiscard]] block_refs take_blocks() {
    taken_ = true;
    return std::move(blocks_);
  }

  // For prefix_cache implementations: drops the held references; true when this match had
  // not been taken (so a counted lookup is being rolled back).
  bool drop() {
    const bool rolled_back = !taken_;
    blocks_.release();
    taken_ = true;
    return rolled_back;
  }

 private:
  block_refs blocks_;
  std::size_t num_tokens_ = 0;
  std::size_t num_query_tokens_ = 0;
  origin origin_ = origin::pin;
  bool taken_ = false;
};

}  // namespace courier::cache
