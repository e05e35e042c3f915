#pragma once
// The scheduler's view of KV blocks: the block pool and the prefix cache of cache/, behind the
// few operations the scheduler's policy needs; its tiers behind theirs, one class each: the KV
// host tier (host(): kv_host_tier.hpp), the disk tier (disk(): kv_disk_tier.hpp) and a hybrid's
// state snapshots (snapshots(): kv_snapshots.hpp). One state, kv_manager_impl.hpp, behind all
// four. Block references: a sequence holds one on each block of its table; the prefix cache
// holds its own on the blocks it stores.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/scheduler/kv_disk_tier.hpp"
#include "actors/scheduler/kv_host_tier.hpp"
#include "actors/scheduler/kv_snapshots.hpp"
#include "actors/scheduler/kv_types.hpp"
#include "cache/block_refs.hpp"
#include "cache/cache_events.hpp"
#include "cache/prefix_match.hpp"
#include "messages/messages.hpp"
#include "messages/step.hpp"

namespace courier::actors {

class kv_manager {
 public:
  // num_host_blocks: the KV host tier's blocks (swap preemption; 0: none); disk: the disk tier
  // behind it (with a host tier and the radix tree only).
  kv_manager(std::int32_t num_blocks, std::int32_t block_size, bool prefix_caching,
             snapshot_setup snapshots = {}, std::int32_t num_host_blocks = 0,
             disk_tier_setup disk = {});
  ~kv_manager();
  kv_manager(const kv_manager&) = delete;
  kv_manager& operator=(const kv_manager&) = delete;

  // The caches' contents now into `log` (cache_snapshot; an all-cleared alone without prefix
  // caching: a router forgets what it knew), then from now on the radix tree's events and the
  // KV host and disk tiers' (their own media); null: none recorded.
  void record_cache_events(cache::cache_event_log* log);
  // The prefix cache's contents as events (radix_tree::snapshot_events: an all-cleared first),
  // then the tiers' (nothing without prefix caching).
  void cache_snapshot(cache::cache_event_log& log) const;
  std::int32_t block_size() const { return block_size_; }
  std::int32_t num_blocks() const { return num_blocks_; }
  // Its gauges and counters into `s` (the scheduler's stats): free and cached device blocks,
  // snapshot rows, the host tier's spills, promotions, write-throughs and entries, the disk
  // tier's counters, entries and ops in flight.
  void count(msg::scheduler_stats& s) const;

  // How a prompt resumes from what the caches keep, in one call (as vLLM's per-type managers
  // answer): the device's longest matched prefix (held; with snapshots, cut to the deepest one
  // with a snapshot, pinned until unpin_snapshot: `at`), the host tier's blocks past it; for a
  // hybrid, a deeper detached snapshot in the host tiers with the device's and host's blocks up
  // to it (host_pins held while fresh blocks are found for them). Leaves the last token to
  // compute; `now` orders snapshot use. The caller takes the match (take) or gives it back
  // (release_matched, unpin_snapshot).
  struct prompt_resume {
    bool lookup = false;  // the prefix cache was looked up (else nothing below is held)
    cache::prefix_match match;
    std::int32_t matched = 0;  // tokens of `match`
    resume_point at;
    std::vector<std::uint64_t> from_host;  // blocks past the match that the host tier keeps
    host_resume deeper;                    // a hybrid's: from a detached snapshot
    cache::block_refs host_pins;           // from_host's, while fresh blocks are found
  };
  prompt_resume resume(const prefix_namespace& ns, const std::vector<msg::token_id>& tokens,
                       bool recurrent, std::uint64_t now);
  void unpin_snapshot(cache::block_id block);
  // The tokens lookup() would match now, in whole blocks: no reference, no count, no LRU touch.
  std::int32_t peek(const prefix_namespace& ns, const std::vector<msg::token_id>& tokens,
                    std::int32_t max_tokens);
  // peek's blocks, held (prefix_cache::pin_prefix): no eviction takes them until the match is
  // released (release_matched) or destroyed. Not counted as a lookup; no LRU touch.
  cache::prefix_match pin(const prefix_namespace& ns, const std::vector<msg::token_id>& tokens,
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
  // Evicts every cached block that no sequence holds (and every snapshot not being restored).
  void evict_all();
  // The prefix cache stores blocks (prefix_cache::is_active): false with prefix caching off.
  bool caching() const;
  void check_invariants() const;

  kv_host_tier& host() { return host_; }
  const kv_host_tier& host() const { return host_; }
  kv_disk_tier& disk() { return disk_; }
  const kv_disk_tier& disk() const { return disk_; }
  kv_snapshots& snapshots() { return snapshots_; }
  const kv_snapshots& snapshots() const { return snapshots_; }

 private:
  // The longest cached prefix of `tokens`, in whole blocks and at most max_tokens tokens, with
  // a reference taken on each block; counted as a hit or a miss. Either append its blocks to a
  // table with take(), or give it back with release_matched() (which uncounts it).
  cache::prefix_match lookup(const prefix_namespace& ns, const std::vector<msg::token_id>& tokens,
                             std::int32_t max_tokens);
  // With snapshots: the match is cut to the deepest prefix that has a snapshot (nothing when
  // none has), whose snapshot is pinned until unpin_snapshot (never evicted meanwhile); `at`
  // says where. Counted by what is reused.
  cache::prefix_match lookup_resumable(const prefix_namespace& ns,
                                       const std::vector<msg::token_id>& tokens,
                                       std::int32_t max_tokens, std::uint64_t now,
                                       resume_point& at);
  std::vector<std::uint64_t> host_continuation(const prefix_namespace& ns,
                                               const std::vector<msg::token_id>& tokens,
                                               std::int32_t matched_tokens,
                                               std::int32_t max_tokens);
  void init_tiers(std::int32_t num_host_blocks, disk_tier_setup disk);  // kv_tiers.cpp
  // The chain hash of tokens' first n tokens (whole blocks) in ns (kv_tiers.cpp).
  std::uint64_t prefix_hash(const prefix_namespace& ns, const std::vector<msg::token_id>& tokens,
                            std::int32_t n);
  struct impl;
  friend class kv_host_tier;
  friend class kv_disk_tier;
  friend class kv_snapshots;
  std::int32_t num_blocks_;
  std::int32_t block_size_;
  std::unique_ptr<impl> impl_;  // Owned: the cache/ structures.
  kv_host_tier host_{*this};
  kv_disk_tier disk_{*this};
  kv_snapshots snapshots_{*this};
};

}  // namespace courier::actors
