#pragma once
// The prefix cache's tier on disk, behind the host tier: which disk slot holds the copy of which
// block, keyed like the host tier by the chain hash of the prefix the block ends (block_hash.hpp)
// and checked against its parent's hash and its tokens. Mechanism only: the caller moves the
// bytes (the disk actor) and says when a write or read is done.
//
// An entry is `writing` from reserve() until written(), then ready; a ready entry is found by
// contains() and read with start_read()/read_done(). Entries being written or read are never
// evicted, so a slot is never reused under an I/O in flight. Least recently used ready entries
// are evicted when reserve() finds no free slot.
//
// Invariants (check_invariants): every slot is free or holds exactly one entry; the LRU order
// lists exactly the entries.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "cache/cache_events.hpp"
#include "cache/lru_order.hpp"
#include "cache/types.hpp"

namespace courier::cache {

class disk_prefix_tier {
 public:
  struct entry {
    std::int64_t slot = -1;
    std::uint64_t parent = 0;
    std::vector<token_id> tokens;
    std::uint64_t last_used = 0;
    bool writing = false;
    std::int32_t readers = 0;
    bool failed = false;  // a read found it damaged: dropped when its last read ends
  };

  disk_prefix_tier(std::int64_t num_slots, std::size_t block_size);

  // A slot to write the block `hash` into (its entry `writing` until written()), evicting the
  // least recently used ready entry when none is free; nothing when the tier keeps `hash` (or is
  // writing it) or no slot can be had.
  std::optional<std::int64_t> reserve(std::uint64_t hash, std::uint64_t parent,
                                      const token_id* tokens);
  // The write into `slot` ended: the entry is ready, or (failed) dropped.
  void written(std::uint64_t hash, std::int64_t slot, bool ok);
  // An entry a previous run left in `slot` (persistence): ready; false when the slot or the
  // hash is taken already.
  bool restore(std::int64_t slot, std::uint64_t hash, std::uint64_t parent,
               const std::vector<token_id>& tokens);

  // Whether the block after the prefix `parent_hash` with these tokens (chain hash `hash`) is
  // kept and may be read; a hit becomes the most recently used.
  bool contains(std::uint64_t parent_hash, std::uint64_t hash, const token_id* tokens);
  // Whether the tier keeps or is writing `hash` (so it need not be written again).
  bool has(std::uint64_t hash) const { return entries_.count(hash) > 0; }
  // Starts a read of a ready entry: it is not evicted until read_done(). Null when not ready.
  const entry* start_read(std::uint64_t hash);
  // The read of `slot` ended; a failed one (corrupted, another block) drops the entry.
  void read_done(std::uint64_t hash, std::int64_t slot, bool ok);

  std::size_t size() const { return entries_.size(); }
  std::int64_t num_slots() const { return num_slots_; }
  void check_invariants() const;

  // Appends a stored event (medium disk) to `log` for each entry once written (or restored), and
  // a removed event for each such entry dropped (null: none recorded). snapshot_events: the
  // written entries, as stored events.
  void record_events(cache_event_log* log) { events_ = log; }
  void snapshot_events(cache_event_log& log) const;

 private:
  void drop(std::unordered_map<std::uint64_t, entry>::iterator it);
  bool evict_one();

  std::int64_t num_slots_;
  std::size_t block_size_;
  std::vector<std::int64_t> free_;                    // free slots, the lowest last
  std::unordered_map<std::uint64_t, entry> entries_;  // by chain hash
  lru_order lru_;  // the entries, by last_used
  cache_event_log* events_ = nullptr;  // Borrowed; null: no events recorded
};

}  // namespace courier::cache
