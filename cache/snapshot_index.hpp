#pragma once
// The recurrent-state snapshots of a hybrid model's prefix cache: which snapshot rows are free,
// and which stored prefix each taken row holds the state after. A snapshot is keyed by the last
// KV block of the prefix it covers (a block the prefix cache stores, which identifies the prefix
// and its namespace), and holds one reference on that block: the prefix cache never evicts a
// held block nor any block before it on its path, so a snapshot's whole prefix stays stored
// while it lives. Mechanism only: which snapshot to evict is the caller's choice (policy).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <unordered_map>
#include <vector>

#include "cache/block_pool.hpp"
#include "cache/types.hpp"

namespace courier::cache {

// Where in a sequence a snapshot was taken (for metrics and policy).
enum class snapshot_kind : std::uint8_t {
  exact,         // the prompt's last block boundary: a repeated prompt, or the next turn's
  intermediate,  // every checkpoint interval of a long prefill
  branch,        // where the prompt left a stored path: a prefix others share
  tail,          // the last block boundary of the output: the next turn of the conversation
};
inline constexpr std::size_t num_snapshot_kinds = 4;

struct snapshot_entry {
  block_id block;             // the prefix's last block (one reference held)
  std::int32_t depth = 0;     // tokens covered: (index of block + 1) * block_size
  std::int32_t slot = -1;     // the device state row holding it; -1 while spilled
  std::int32_t host_slot = -1;  // the host tier's row holding it, when spilled
  snapshot_kind kind = snapshot_kind::exact;
  std::uint64_t last_used = 0;  // logical time of its insert or latest hit
  std::int32_t pins = 0;        // sequences restoring it now: never evicted while > 0
  std::uint32_t hits = 0;       // lookups that resumed from it
  std::uint64_t hash = 0;       // the chain hash of its prefix (block_hash.hpp); 0: not known
  bool ready = true;            // detached: its copy to the host row is known to have run
};

// The host tier (num_host_slots rows of host memory): a snapshot evicted from the device may be
// spilled there (spill: it keeps its key and its block reference, so it stays findable) and
// promoted back into a device row when a lookup resumes from it. The caller copies the state
// (device row -> host row, and back) in the order it spills and promotes.
//
// Invariants (check_invariants): every slot in [first_slot, first_slot + num_slots) is either
// free (listed once) or held by exactly one entry or one pending taker; every host row is free,
// held by exactly one spilled entry, or lent (take_host); an entry is in exactly one tier; each
// entry holds one reference on its block, a block has at most one entry, and entries are never
// pinned negative.
class snapshot_index {
 public:
  snapshot_index(block_pool& pool, std::int32_t first_slot, std::int32_t num_slots,
                 std::int32_t num_host_slots = 0);
  ~snapshot_index();  // drops the entries' references
  snapshot_index(const snapshot_index&) = delete;
  snapshot_index& operator=(const snapshot_index&) = delete;

  std::int32_t capacity() const { return num_slots_; }
  std::int32_t num_free_slots() const { return static_cast<std::int32_t>(free_.size()); }
  std::size_t size() const { return entries_.size(); }

  // A free row for a snapshot about to be taken (the taker holds it until insert() or
  // give_back()); nothing when every row is held.
  std::optional<std::int32_t> take_slot();
  void give_back(std::int32_t slot);

  // Registers the snapshot in `slot` (from take_slot) as the state after the prefix ending with
  // `block`, which the prefix cache stores, `depth` tokens long; takes one reference on the
  // block. A block with a snapshot already keeps it: `slot` goes back and the answer is false.
  // `hash`: its prefix's chain hash, for detach() (0: none, never detached).
  bool insert(block_id block, std::int32_t depth, std::int32_t slot, snapshot_kind kind,
              std::uint64_t now, std::uint64_t hash = 0);

  // The entry for `block`, or null.
  const snapshot_entry* find(block_id block) const;
  // The deepest entry among `path` (a prefix's blocks in order), as an index into it; -1: none.
  std::int32_t deepest(const std::vector<block_id>& path) const;

  void touch(block_id block, std::uint64_t now);
  // A lookup resumes from it: touched, and its hits counted.
  void hit(block_id block, std::uint64_t now);
  void pin(block_id block);
  void unpin(block_id block);

  // Drops the entry for `block` (not pinned): its reference and its row (device or host) go
  // back.
  void erase(block_id block);

  // Host tier. spill(): the entry (on the device, not pinned) moves to a free host row, which it
  // returns; its device row is free from then on (copy it out first, in stream order). nullopt,
  // and no change, when no host row is free. promote(): the spilled entry moves into `slot`
  // (from take_slot), its host row freed; returns that host row (copy it in first).
  std::int32_t host_capacity() const { return num_host_slots_; }
  std::int32_t num_free_host_slots() const { return static_cast<std::int32_t>(host_free_.size()); }
  std::int32_t num_spilled() const {  // block-keyed entries in host rows
    return num_host_slots_ - num_free_host_slots() - host_lent_ -
           static_cast<std::int32_t>(detached_.size());
  }
  std::optional<std::int32_t> spill(block_id block);
  std::int32_t promote(block_id block, std::int32_t slot);
  // A host row lent to the caller (a swapped-out sequence's own state), until give_back_host();
  // nothing when none is free.
  std::optional<std::int32_t> take_host();
  void give_back_host(std::int32_t host_row);
  std::int32_t num_lent_host() const { return host_lent_; }
  // Every entry, for a policy to choose from (valid until the next change).
  std::vector<const snapshot_entry*> entries() const;

  // Detached snapshots (a host tier of KV blocks behind the device's, so a prefix outlives its
  // device blocks): keyed by the chain hash of their prefix instead of a block, in host rows,
  // holding no block. detach(): the entry for `block` (on the device, known hash, not pinned)
  // lets its block go and moves to a free host row, not ready until set_ready(); returns {the
  // device row to copy from, the host row}; nullopt and no change when no host row is free.
  // One detached entry per hash (a newer one replaces it).
  std::optional<std::pair<std::int32_t, std::int32_t>> detach(block_id block);
  const snapshot_entry* find_detached(std::uint64_t hash) const;
  void erase_detached(std::uint64_t hash);
  // The copy into host_row answered: ready, or (failed) erased. Ignored when the entry under
  // hash is gone or newer (another host row).
  void set_ready(std::uint64_t hash, std::int32_t host_row, bool ok);
  void pin_detached(std::uint64_t hash);
  void unpin_detached(std::uint64_t hash);
  void hit_detached(std::uint64_t hash, std::uint64_t now);
  std::vector<const snapshot_entry*> detached() const;
  std::size_t num_detached() const { return detached_.size(); }

  // Throws std::logic_error describing the first violated invariant.
  void check_invariants() const;

 private:
  snapshot_entry& at(block_id block);

  block_pool& pool_;  // Borrowed; outlives the index.
  std::int32_t first_slot_;
  std::int32_t num_slots_;
  std::vector<std::int32_t> free_;  // a stack of free rows
  std::int32_t num_host_slots_;
  std::vector<std::int32_t> host_free_;  // a stack of free host rows
  std::int32_t host_lent_ = 0;           // host rows lent out (take_host)
  std::unordered_map<block_id, snapshot_entry, block_id_hash> entries_;
  std::unordered_map<std::uint64_t, snapshot_entry> detached_;  // by chain hash
};

}  // namespace courier::cache
