#pragma once
// The prefix cache proper: a block-granular radix tree keyed by token ids, one root per
// namespace. Each node's edge holds whole blocks (block_size tokens each) and the block id that
// holds their KV; a child is keyed by its first block. Semantics in prefix_cache.hpp, the
// ownership model in README.md.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "cache/block_pool.hpp"
#include "cache/cache_events.hpp"
#include "cache/prefix_cache.hpp"

namespace courier::cache {

// Invariants (check_invariants() verifies each):
// - the tree holds exactly one reference on each block it stores, and stores a block once;
// - a root holds no blocks and has at least one child; every other node holds >= 1 block and
//   block_size tokens per block; siblings differ in their first block;
// - a node's LRU time is never older than its descendants' (a path is touched as a whole);
// - leaves_ lists exactly the non-root nodes without children, keyed by their LRU time, and no
//   two leaves share a time (one operation touches one path).
class radix_tree final : public prefix_cache {
 public:
  radix_tree(block_pool& pool, std::size_t block_size);
  ~radix_tree() override;  // drops the tree's references

  radix_tree(const radix_tree&) = delete;
  radix_tree& operator=(const radix_tree&) = delete;

  std::size_t block_size() const override { return block_size_; }
  bool is_active() const override { return true; }
  std::size_t peek_matched_tokens(const cache_namespace& ns, token_span tokens) const override;
  prefix_match lookup(const cache_namespace& ns, token_span tokens) override;
  prefix_match pin_prefix(const cache_namespace& ns, token_span tokens) override;
  void release_matched(prefix_match match) override;
  insert_result insert(const cache_namespace& ns, token_span tokens, block_refs& table,
                       std::size_t num_matched_tokens) override;
  void release(block_refs table) override { table.release(); }
  std::vector<block_id> evict(std::size_t num_blocks) override;
  prefix_cache_stats stats() const override;
  bool stores(block_id block) const override {
    return block.value >= 0 && static_cast<std::size_t>(block.value) < stored_.size() &&
           stored_[static_cast<std::size_t>(block.value)];
  }
  void check_invariants() const override;

  // Called by evict() for each block it is about to free, with the chain hash of the prefix up
  // to the block's end (block_hash.hpp), that of the prefix before it, and its block_size
  // tokens (valid during the call): where a tier behind the device keeps a copy.
  using evict_listener = std::function<void(block_id block, std::uint64_t hash,
                                            std::uint64_t parent_hash, const token_id* tokens)>;
  void on_evict(evict_listener f) { on_evict_ = std::move(f); }

  // Appends a cache_event to `log` for each insert that stores blocks and each evict that
  // frees some (null: none recorded). The log is the caller's, drained as it likes.
  void record_events(cache_event_log* log) { events_ = log; }
  // The tree's contents as events, appended to `log`: an all-cleared, then one stored event per
  // node with blocks, parents before children (what a watcher joining now must know).
  void snapshot_events(cache_event_log& log) const;

 private:
  struct node;
  // Where a walk from a root stopped: `matched` blocks of the tokens matched, the last of them
  // being block `offset - 1` of `at` (at == root and offset == 0 when nothing matched).
  struct walk_end {
    node* at = nullptr;
    std::size_t offset = 0;
    std::size_t matched = 0;
  };

  node* find_root(const cache_namespace& ns) const;
  node* find_child(const node& parent, const token_id* first_block) const;
  bool same_block(const token_id* a, const token_id* b) const;
  std::uint64_t block_key(const token_id* first_block) const;
  // Walks from `root` along the full blocks of `tokens`, appending matched block ids to `out`.
  walk_end walk(node* root, token_span tokens, std::vector<block_id>* out) const;
  prefix_match match(const cache_namespace& ns, token_span tokens, prefix_match::origin from);

  // Cuts `n` after its first `offset` blocks; the rest becomes its only child.
  void split(node& n, std::size_t offset);
  // Adds table blocks [first, last) of `tokens` below `parent` (extending it when it is a leaf).
  node* attach(node& parent, token_span tokens, const block_refs& table, std::size_t first,
               std::size_t last, insert_result& result);
  void touch_path(node* deepest, std::uint64_t now);
  void set_last_used(node& n, std::uint64_t now);
  void add_leaf(node& n);
  void remove_empty_leaf(node& leaf);  // already out of leaves_

  block_pool& pool_;  // Borrowed; outlives the tree.
  std::size_t block_size_;
  std::unordered_map<cache_namespace, std::unique_ptr<node>, cache_namespace_hash> roots_;
  std::map<std::uint64_t, node*> leaves_;  // by LRU time; nodes owned by the tree
  std::vector<bool> stored_;               // by block id: the tree stores this block
  std::uint64_t clock_ = 0;                // LRU time: one tick per touching operation
  std::size_t num_blocks_ = 0;
  std::size_t num_nodes_ = 0;
  prefix_cache_stats counters_;  // only the counter fields are used
  evict_listener on_evict_;
  cache_event_log* events_ = nullptr;  // Borrowed; null: no events recorded
};

}  // namespace courier::cache
