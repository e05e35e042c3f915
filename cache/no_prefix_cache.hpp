#pragma once
// The prefix cache of `scheduler.prefix_caching: false`: stores nothing, matches nothing, and
// so never holds a reference. Every lookup counts as a miss; insert accepts any table and
// changes nothing.
#include "cache/prefix_cache.hpp"

namespace courier::cache {

// Invariants: holds no block and no reference.
class no_prefix_cache final : public prefix_cache {
 public:
  explicit no_prefix_cache(std::size_t block_size) : block_size_(block_size) {}

  std::size_t block_size() const override { return block_size_; }
  bool is_active() const override { return false; }
  std::size_t peek_matched_tokens(const cache_namespace&, token_span) const override { return 0; }
  prefix_match lookup(const cache_namespace& ns, token_span tokens) override;
  prefix_match pin_prefix(const cache_namespace& ns, token_span tokens) override;
  void release_matched(prefix_match match) override;
  insert_result insert(const cache_namespace& ns, token_span tokens, block_refs& table,
                       std::size_t num_matched_tokens) override;
  void release(block_refs table) override { table.release(); }
  std::vector<block_id> evict(std::size_t) override { return {}; }
  prefix_cache_stats stats() const override { return counters_; }
  bool stores(block_id) const override { return false; }
  void check_invariants() const override {}

 private:
  std::size_t block_size_;
  prefix_cache_stats counters_;
};

}  // namespace courier::cache
