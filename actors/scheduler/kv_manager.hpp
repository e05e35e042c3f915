#pragma once
// The scheduler's view of KV blocks: the block pool and the prefix cache of cache/, behind the
// few operations the scheduler's policy needs. Block references: a sequence holds one on each
// block of its table; the prefix cache holds its own on the blocks it stores.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/scheduler/snapshot_policy.hpp"
#include "cache/block_refs.hpp"
#include "cache/cache_events.hpp"
#include "cache/prefix_match.hpp"
#include "cache/snapshot_index.hpp"
#include "messages/disk.hpp"
#include "messages/messages.hpp"
#include "messages/step.hpp"

namespace courier::actors {

// Prefix-cache namespace: one never reuses another's blocks.
struct prefix_namespace {
  std::string adapter;
  std::string isolation_key;  // the tenant when cache_isolation is "tenant"
};

// A hybrid model's snapshot rows: device state rows [first_slot, first_slot + num_slots) hold
// snapshots of the recurrent state at stored prefixes (none: num_slots 0).
struct snapshot_setup {
  std::int32_t first_slot = 0;
  std::int32_t num_slots = 0;
  std::int32_t num_host_slots = 0;  // the host tier (0: an evicted snapshot is dropped)
  snapshot_policy policy;
};

// Where a hybrid's sequence can resume: the deepest prefix with both KV blocks and a snapshot.
struct resume_point {
  std::int32_t tokens = 0;         // prefix covered (its blocks matched, its snapshot pinned)
  std::int32_t slot = -1;          // the snapshot's row; -1: none (start from position 0)
  cache::block_id block;           // the snapshot's key (to unpin)
  cache::snapshot_kind kind = cache::snapshot_kind::exact;
  bool spilled = false;            // promoted from the host tier for this lookup
  bool from_host_state = false;    // a detached snapshot's state, copied into the slot
  std::int32_t stored_tokens = 0;  // the stored KV prefix, >= tokens: past it the prompt is new
};

// A hybrid's resume point in the host tiers (find_host_resume): a detached snapshot (pinned
// until unpin_detached) at `tokens`, whose prefix's blocks the device stores up to
// `device_tokens` and the host tier keeps from there (`from_host`, chain hashes in order).
struct host_resume {
  std::int32_t tokens = 0;  // 0: none deeper than the device's
  std::int32_t device_tokens = 0;
  std::int32_t host_row = -1;
  std::uint64_t hash = 0;
  cache::snapshot_kind kind = cache::snapshot_kind::exact;
  std::vector<std::uint64_t> from_host;
};

// A block the host tier took in, for forgetting it if the step that copies it fails.
struct spilled_block {
  std::uint64_t hash = 0;
  std::int32_t host_block = -1;
};

// Copies for the device's copy stream (msg::step_plan::async_copies): back from the host tier
// (promotions, swaps in) and out to it (write-through), with a reference on every block they
// name, device and host, for their batch to hold until the engine says they are done: until then
// no row may use a device block they write or write one they read, and nothing else may touch
// their host blocks.
struct async_copy_batch {
  std::vector<msg::block_copy> copies;
  cache::block_refs device, host;
  std::vector<spilled_block> written;  // host tier entries its copies out write (write-through)
};

// A block a previous run left in the disk tier (cache.disk_tier_persist), its header checked.
struct disk_entry {
  std::int64_t slot = 0;
  std::uint64_t hash = 0;    // the chain hash of the prefix it ends
  std::uint64_t parent = 0;  // the one before it
  std::vector<msg::token_id> tokens;
};

// The KV disk tier behind the host tier (num_slots 0: none).
struct disk_tier_setup {
  std::int64_t num_slots = 0;
  std::vector<disk_entry> restored;
  // Host blocks disk writes may hold at once (0: an eighth of the host tier, at least 1), so
  // the host tier keeps room for spills and reads while writes run.
  std::int32_t max_writes_in_flight = 0;
};

struct disk_counters {
  std::uint64_t written = 0, write_failed = 0;  // blocks
  std::uint64_t read = 0, read_failed = 0;
  std::uint64_t promoted = 0;  // blocks a disk read brought that were copied to the device
  std::uint64_t restored = 0;  // entries a previous run left
};

// A hybrid's snapshot rows and the costs their policy weighs, from the engine's shape, with
// Marconi's FLOPs-per-byte weight `eviction_alpha` (cache.ssm_eviction_alpha); none for a model
// without recurrent state.
snapshot_setup snapshot_setup_for(const msg::engine_ready& ready, double eviction_alpha);

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

  // The KV host tier (swap preemption). swap_out: host blocks for table's first n entries, the
  // copies out queued, and table released (false, nothing changed: no host tier or too few free
  // host blocks). swap_in: device blocks for host's entries and `extra` more (evicting cached
  // blocks as allocate() does) into the empty table, the copies back queued (async: for the
  // copy stream), and host released (false, nothing changed: too few blocks). The next step
  // runs the copies out first, in order, and starts the copies back after them.
  std::int32_t num_host_blocks() const;
  bool swap_out(cache::block_refs& table, std::int32_t n, cache::block_refs& host);
  bool swap_in(cache::block_refs& host, std::int32_t extra, cache::block_refs& table);
  std::vector<msg::block_copy> take_block_copies();
  // A reference on each host block the copies taken name, for the plan's flight to hold until
  // its step answers: until then no disk read may be given one (it writes host memory outside
  // the engine's stream order). Take with take_block_copies.
  cache::block_refs take_copy_holds();
  // The copy stream's copies queued since the last call (swap_in and promote back, write_through
  // out), for the next plan; the host tier entries they write (`written`) count as being copied
  // (not promoted, not written to disk) until spilled_answered says how their batch went.
  async_copy_batch take_async_copies();
  const async_copy_batch& queued_async_copies() const;  // not yet taken (invariant checks)

  // The host tier's prefix cache (a KV host tier, prefix caching, no snapshots): every block the
  // device's prefix cache evicts is copied to host memory (a spill: a block_copy queued before
  // the block can be written again), findable by its prefix. host_continuation: the chain hashes
  // of the blocks past `matched_tokens` (a device match) that the tier holds, in order, within
  // max_tokens. promote: copies them back into fresh's first blocks (queued async), keeping them
  // in the tier (evicted from the device again, they need no copy out); returns how many it
  // could (fewer when the allocation of fresh evicted some).
  std::int32_t promote(const std::vector<std::uint64_t>& hashes, const cache::block_refs& fresh);
  // Spills since the last call, for the plan that carries their copies: they are not promoted
  // while it is in flight. spilled_answered: that step answered; if it failed, they are dropped
  // (their copies may not have run). (Before their plan, a promotion queues behind the spill.)
  std::vector<spilled_block> take_spilled();
  void spilled_answered(const std::vector<spilled_block>& spilled, bool ok);
  // Write-through: after an insert, the host tier takes a copy of each of table's blocks in
  // [from_block, to_block) (the blocks the insert stored; table holds the cache's own) that it
  // does not keep, on the copy stream, so that evicting it from the device later copies nothing
  // in the step's stream order. A tier under twice the device's blocks takes them into free
  // host blocks only (never evicting an entry for a block the device still holds).
  // Counted as spills too.
  void write_through(const prefix_namespace& ns, const std::vector<msg::token_id>& tokens,
                     const cache::block_refs& table, std::int32_t from_block,
                     std::int32_t to_block);
  // Invariant check (std::logic_error): every host block in use has a holder, from the tier's
  // entries, its disk copies in flight and its copies queued, in `held` (the scheduler's: pins,
  // the copies of steps and batches in flight) or in `swapped` (swapped-out sequences' blocks,
  // each its holder's alone: no entry's, not twice).
  void check_host_holders(std::vector<std::int32_t> held,
                          const std::vector<std::int32_t>& swapped) const;

  // The disk tier. Host tier entries whose bytes are in host memory are written to disk (write-
  // through, oldest first, at most max_writes_in_flight at once), so an entry the host tier
  // evicts is still found on disk. tier_continuation: in one walk of the prompt, what
  // host_continuation gives (`host`), then the chain hashes past it that the disk keeps or is
  // reading (`disk`), in order, within max_tokens. start_disk_reads:
  // reads of those (from the first) into host blocks, for as many as can be had, each once
  // (a read already in flight is not started again); their host blocks are held until
  // disk_answered, when a read's block joins the host tier (found by host_continuation from
  // then on). take_disk_ops: the reads started and the writes due, for one batch to the disk
  // actor. disk_answered: each op's outcome (a failed one's entry is dropped, never served).
  bool has_disk() const;
  // The prefix cache stores blocks (prefix_cache::is_active): false with prefix caching off.
  bool caching() const;
  void tier_continuation(const prefix_namespace& ns, const std::vector<msg::token_id>& tokens,
                         std::int32_t matched_tokens, std::int32_t max_tokens,
                         std::vector<std::uint64_t>& host, std::vector<std::uint64_t>& disk);
  std::int32_t start_disk_reads(const std::vector<std::uint64_t>& hashes);
  bool disk_read_in_flight(std::uint64_t hash) const;
  // A reference on the host blocks of the entries `hashes` names, from the first while the
  // host tier keeps them: kept from eviction while held.
  cache::block_refs pin_host(const std::vector<std::uint64_t>& hashes);
  std::vector<msg::disk_op> take_disk_ops();
  void disk_answered(const msg::disk_op& op, bool ok);
  const disk_counters& disk_stats() const;

  // Snapshot rows. A row for a snapshot about to be taken, evicting the policy's choice when
  // none is free and `may_evict`; nothing when none can be had.
  std::optional<std::int32_t> take_snapshot_slot(bool may_evict);
  void give_back_snapshot_slot(std::int32_t slot);
  // Whether a snapshot of `kind` is worth taking (the policy's admission by reuse likelihood).
  bool worth_taking(cache::snapshot_kind kind);
  // Registers the snapshot in `slot` as the state after table's first `depth` tokens, whose
  // blocks the prefix cache stores (insert() first); false (the row goes back) when they are not
  // stored or the prefix has a snapshot already.
  // `ns` and `tokens` name the prefix (its chain hash keys it once detached).
  bool add_snapshot(const prefix_namespace& ns, const std::vector<msg::token_id>& tokens,
                    const cache::block_refs& table, std::int32_t depth, std::int32_t slot,
                    cache::snapshot_kind kind, std::uint64_t now);
  // With a KV host tier, a hybrid's snapshots evicted from the device are detached: kept in a
  // host row by their prefix's chain hash (the policy's choice, when worth it), so their blocks
  // may leave the device too. find_host_resume: the deepest prefix of tokens (within
  // max_tokens) deeper than at.tokens whose blocks the device stores (up to at.stored_tokens)
  // or the host tier keeps after them, with a detached snapshot that is ready, pinned and
  // counted as a hit; tokens 0: none. take_detached: the snapshots detached since the last
  // call, for the plan that carries their copies; detached_answered: its step answered (failed:
  // they are forgotten, their copies may not have run).
  host_resume find_host_resume(const prefix_namespace& ns,
                               const std::vector<msg::token_id>& tokens, const resume_point& at,
                               std::int32_t max_tokens, std::uint64_t now);
  void unpin_detached(std::uint64_t hash);
  // The last of `hashes` (chain hashes of consecutive blocks) with a detached snapshot, ready
  // or not, as an index; -1: none.
  std::int32_t deepest_detached(const std::vector<std::uint64_t>& hashes) const;
  std::vector<spilled_block> take_detached();
  void detached_answered(const std::vector<spilled_block>& detached, bool ok);
  std::int32_t num_detached_snapshots() const;
  // The deepest prefix of table's first `tokens` tokens (whole blocks) with a snapshot, in
  // tokens (0: none): where a hybrid preempted now would resume from.
  std::int32_t snapshot_depth(const cache::block_refs& table, std::int32_t tokens) const;
  std::int32_t snapshot_capacity() const;
  std::int32_t num_snapshots() const;  // kept in device rows (not counting spilled ones)
  std::int32_t num_free_snapshot_slots() const;
  std::int32_t num_spilled_snapshots() const;
  // The copies spills and promotions since the last call need, in order: the next step runs
  // them before its rows.
  std::vector<msg::state_copy> take_state_copies();
  // A swapped-out hybrid's recurrent state (swap preemption): a host row of the snapshots'
  // host tier for it (the least useful spilled snapshot giving its row up when none is free;
  // nothing without that tier), held until given back (giving back -1 does nothing);
  // copy_state queues a copy between it and a state slot behind the spills and promotions
  // queued before (take_state_copies).
  std::optional<std::int32_t> take_host_state_row();
  void give_back_host_state_row(std::int32_t host_row);
  void copy_state(bool to_host, std::int32_t row, std::int32_t host_row);
  std::int32_t num_lent_host_state_rows() const;
  // Whether take_host_state_row would give a row now (one free, or a spilled snapshot to drop).
  bool host_state_row_available() const;
  // A step that carried state copies failed: the copies may not have run, so every snapshot not
  // being restored is forgotten.
  void forget_snapshots();
  void check_invariants() const;


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
  std::int32_t num_blocks_;
  std::int32_t block_size_;
  std::unique_ptr<impl> impl_;  // Owned: the cache/ structures.
};

}  // namespace courier::actors
