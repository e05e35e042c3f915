#pragma once
// The prefix cache as the scheduler sees it. Two implementations: radix_tree (reuse) and
// no_prefix_cache (`scheduler.prefix_caching: false`). Ownership and the scheduler's protocol
// are in README.md; in short, the cache holds one reference on each block it stores, a
// sequence one on each block of its table, and a match one on each block it matched.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cache/block_refs.hpp"
#include "cache/cache_namespace.hpp"
#include "cache/prefix_match.hpp"
#include "cache/types.hpp"

namespace courier::cache {

// Table entry `index` held `dropped`; the cache already stored `kept` for the same tokens, so
// the sequence's reference moved to `kept` (and `dropped` was freed if nobody else held it).
struct block_follow {
  std::size_t index = 0;
  block_id dropped;
  block_id kept;
};

// What insert did (the reference design's InsertAcquired), for the engine's block table and
// for tests. The tree never stops storing a block on insert: only evict() does that.
struct insert_result {
  std::vector<block_id> stored;        // the sequence's blocks the cache now also holds (in order)
  std::vector<block_follow> followed;  // entries whose reference followed the cache's block
};

struct prefix_cache_stats {
  std::size_t num_blocks = 0;      // blocks the cache stores (one cache reference each)
  std::size_t num_nodes = 0;       // tree nodes, roots excluded
  std::size_t num_namespaces = 0;  // namespaces with at least one stored block
  // Counters count lookups whose blocks were reused: a lookup counts when made and is taken
  // back by release_matched() if its blocks were not taken. pin_prefix() never counts.
  std::uint64_t num_hits = 0;          // lookups that reused at least one block
  std::uint64_t num_misses = 0;        // lookups that reused none
  std::uint64_t num_hit_tokens = 0;    // tokens in reused blocks
  std::uint64_t num_query_tokens = 0;  // tokens those lookups asked about
  std::uint64_t num_evicted_blocks = 0;
};

class prefix_cache {
 public:
  virtual ~prefix_cache() = default;

  virtual std::size_t block_size() const = 0;

  // Whether it stores anything at all (false: no_prefix_cache), so that a caller skips the
  // lookups, inserts and their counting instead of making calls that can only miss.
  virtual bool is_active() const = 0;

  // Tokens of `tokens` that lookup() would match now (a multiple of the block size). No
  // references, no LRU touch, no counters: for planning.
  [[nodiscard]] virtual std::size_t peek_matched_tokens(const cache_namespace& ns,
                                                        token_span tokens) const = 0;

  // The longest stored prefix of `tokens`, in whole blocks, with one reference taken on each
  // block for the caller; touches the matched blocks' LRU time; counts a hit or a miss. Pass
  // only tokens the sequence will not compute (the prompt without its last token, which must
  // be computed to sample), so that no matched block is recomputed.
  [[nodiscard]] virtual prefix_match lookup(const cache_namespace& ns, token_span tokens) = 0;

  // lookup() without counters: holds a prefix against eviction while the scheduler plans.
  [[nodiscard]] virtual prefix_match pin_prefix(const cache_namespace& ns, token_span tokens) = 0;

  // Drops exactly the references the match still holds, whatever the tree did since; a lookup
  // whose blocks were not taken is uncounted.
  virtual void release_matched(prefix_match match) = 0;

  // Stores the full blocks of `tokens` (a finished or fully prefilled sequence) with the
  // sequence's block table `table` (entry i holds tokens [i*block_size, (i+1)*block_size)).
  // Where the cache already stores a block for those tokens it keeps its own and moves the
  // table's reference onto it; elsewhere it takes one reference on the table's block.
  // `num_matched_tokens` is the sequence's lookup match (or an earlier insert): table entries
  // before it must be the cache's blocks (radix_tree: std::invalid_argument otherwise).
  // Touches the LRU time of the whole path.
  virtual insert_result insert(const cache_namespace& ns, token_span tokens, block_refs& table,
                               std::size_t num_matched_tokens) = 0;

  // The sequence is done with its block table (finished, cancelled or preempted): drops its
  // references. Call insert() first to keep its blocks for reuse.
  virtual void release(block_refs table) = 0;

  // Frees up to num_blocks blocks that only the cache holds, least recently used leaves first
  // (a block goes only after every stored block that extends its prefix); returns them, in
  // eviction order. They are free in the pool on return.
  [[nodiscard]] virtual std::vector<block_id> evict(std::size_t num_blocks) = 0;

  virtual prefix_cache_stats stats() const = 0;

  // Whether the cache stores `block` (holds its reference on it).
  virtual bool stores(block_id block) const = 0;

  // Throws std::logic_error describing the first violated invariant.
  virtual void check_invariants() const = 0;
};

}  // namespace courier::cache
