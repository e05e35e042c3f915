#pragma once
// The scheduler's view of KV blocks: the block pool and the prefix cache of cache/, behind the
// few operations the scheduler's policy needs. Block references: a sequence holds one on each
// block of its table; the prefix cache holds its own on the blocks it stores.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/block_refs.hpp"
#include "cache/prefix_match.hpp"
#include "messages/messages.hpp"

namespace courier::actors {

// Prefix-cache namespace: one never reuses another's blocks.
struct prefix_namespace {
  std::string adapter;
  std::string isolation_key;  // the tenant when cache_isolation is "tenant"
};

class kv_manager {
 public:
  kv_manager(std::int32_t num_blocks, std::int32_t block_size, bool prefix_caching);
  ~kv_manager();
  kv_manager(const kv_manager&) = delete;
  kv_manager& operator=(const kv_manager&) = delete;

  std::int32_t block_size() const { return block_size_; }
  std::int32_t num_blocks() const { return num_blocks_; }
  std::int32_t num_free() const;
  std::int32_t num_cached() const;  // blocks the prefix cache stores

  // The longest cached prefix of `tokens`, in whole blocks and at most max_tokens tokens, with
  // a reference taken on each block; counted as a hit or a miss. Either append its blocks to a
  // table with take(), or give it back with release_matched() (which uncounts it).
  cache::prefix_match lookup(const prefix_namespace& ns, const std::vector<msg::token_id>& tokens,
                             std::int32_t max_tokens);
  void take(cache::prefix_match& match, cache::block_refs& table);
  void release_matched(cache::prefix_match match);
  // n fresh blocks with one reference each for the caller, evicting unreferenced cached blocks
  // when the pool is short; nothing (and no change) when they cannot all be had.
  std::optional<cache::block_refs> allocate(std::int32_t n);
  // Stores the first num_full_blocks blocks of (tokens, table) in the prefix cache. Where the
  // cache already holds a block for the same tokens, the table entry becomes that block (the
  // caller's reference moves with it), so the sequence and the cache share one copy.
  // num_cached_tokens: leading tokens whose table entries are already the cache's blocks (a
  // lookup's match or an earlier insert).
  void insert(const prefix_namespace& ns, const std::vector<msg::token_id>& tokens,
              cache::block_refs& table, std::int32_t num_full_blocks,
              std::int32_t num_cached_tokens);
  // Drops the references on table's entries from n on (rolling back past rejected drafts: those
  // blocks hold no computed token, so the prefix cache has none of them).
  void truncate(cache::block_refs& table, std::int32_t n);
  // Drops the caller's reference on every block of table, and clears it.
  void release(cache::block_refs& table);
  // Evicts every cached block that no sequence holds.
  void evict_all();
  void check_invariants() const;


 private:
  struct impl;
  std::int32_t num_blocks_;
  std::int32_t block_size_;
  std::unique_ptr<impl> impl_;  // Owned: the cache/ structures.
};

}  // namespace courier::actors
