#pragma once
// The prefix cache's tier in host memory: copies of KV blocks the radix tree evicted from the
// device, keyed by the chain hash of the prefix they end (block_hash.hpp: namespace and every
// token up to the block's end), so a later lookup that matches the device's blocks up to some
// point can go on matching here and copy the rest back instead of recomputing it.
//
// Mechanism only: the caller queues the copies (device -> host when put() gives a block, host ->
// device when it takes one) and decides what to keep. Blocks come from a block_pool of host
// blocks that other holders (swapped-out sequences) share: the tier holds one reference on each
// of its entries' blocks and evicts only its own entries, least recently used first.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "cache/block_refs.hpp"
#include "cache/cache_events.hpp"
#include "cache/lru_order.hpp"
#include "cache/types.hpp"

namespace courier::cache {

class host_prefix_tier {
 public:
  // with_disk: a disk tier is behind (take_writable is used).
  host_prefix_tier(block_pool& host_pool, std::size_t block_size, bool with_disk = false);

  host_prefix_tier(const host_prefix_tier&) = delete;
  host_prefix_tier& operator=(const host_prefix_tier&) = delete;

  // A host block to copy the evicted block into: its prefix's chain hash `hash`, the hash of the
  // prefix before it, and its block_size tokens. Evicts this tier's least recently used entries
  // when the pool has no block free; nothing when `hash` is kept already or no block can be had.
  std::optional<block_id> put(std::uint64_t hash, std::uint64_t parent_hash,
                              const token_id* tokens);
  // Whether the block after the prefix `parent_hash` with these tokens (chain hash `hash`) is
  // kept and may be copied back (not while the step copying it out is in flight: if that step
  // fails, the copy may not have run); a hit becomes the most recently used.
  bool contains(std::uint64_t parent_hash, std::uint64_t hash, const token_id* tokens);
  // A new reference on the entry's block, to copy back from while the entry stays (the tier
  // keeps what it gives back: other requests may copy it too meanwhile, and when the device
  // evicts its copy again there is nothing to copy out); empty when it is not kept. The entry
  // becomes the most recently used. *from_disk: whether a disk read brought it and no copy back
  // was counted for that read before.
  block_refs share(std::uint64_t hash, bool* from_disk);
  // Drops the entry if it still holds `block` (its copy may not have been made).
  void forget(std::uint64_t hash, block_id block);
  // Marks the entry (if it still holds `block`) as being copied out by a step in flight, or not
  // (that step answered: its bytes are in host memory, and it may be written to disk).
  void set_in_flight(std::uint64_t hash, block_id block, bool in_flight);

  // The disk tier behind this one. adopt: an entry whose bytes a disk read put in `block`
  // (false, block given back: `hash` is kept already). set_on_disk: the disk keeps `hash`, so
  // it is not written again. take_writable: up to n entries whose bytes are in host memory and
  // that the disk does not keep, oldest first, each with a new reference on its block (held
  // until its write ends); they count as on disk from here.
  bool adopt(std::uint64_t hash, std::uint64_t parent_hash, const std::vector<token_id>& tokens,
             block_refs block);
  void set_on_disk(std::uint64_t hash);
  struct writable {
    std::uint64_t hash = 0;
    std::uint64_t parent = 0;
    std::vector<token_id> tokens;
    block_refs block;
  };
  std::vector<writable> take_writable(std::size_t n);
  // Whether the entry's bytes came from the disk tier (for counting hits by tier).
  bool from_disk(std::uint64_t hash) const;
  // The host blocks the entries hold (for the owner's invariant checks).
  std::vector<block_id> blocks() const;
  // Frees up to n host blocks by dropping least recently used entries nobody else holds (an
  // entry whose block is shared — a disk write in flight, a waiting request's pin — frees
  // nothing, so it stays).
  std::size_t evict(std::size_t n);
  // The entry's block, when its bytes are in host memory (for a holder's pin).
  std::optional<block_id> block_of(std::uint64_t hash) const;

  std::size_t size() const { return entries_.size(); }
  void check_invariants() const;

  // Appends a stored event (medium cpu) to `log` for each entry once its bytes are in host
  // memory (its copy out answered, or a disk read adopted), and a removed event for each such
  // entry dropped (null: none recorded). snapshot_events: those entries, as stored events.
  void record_events(cache_event_log* log) { events_ = log; }
  void snapshot_events(cache_event_log& log) const;

 private:
  struct entry {
    block_refs block;
    std::uint64_t parent = 0;
    std::vector<token_id> tokens;
    std::uint64_t last_used = 0;
    bool in_flight = false;
    bool copied = false;     // its bytes are in host memory (its copy out answered, or a read)
    bool on_disk = false;    // the disk tier keeps it or is writing it
    bool from_disk = false;  // a disk read brought it
  };
  void drop(std::unordered_map<std::uint64_t, entry>::iterator it);

  block_pool& pool_;  // Borrowed; outlives the tier.
  std::size_t block_size_;
  std::unordered_map<std::uint64_t, entry> entries_;  // by chain hash
  lru_order lru_;  // the entries, by last_used
  // Entries that became writable, oldest first (checked again when taken: they may have gone).
  std::deque<std::pair<std::uint64_t, block_id>> writable_;
  bool disk_ = false;  // a disk tier is behind: writable_ is kept
  cache_event_log* events_ = nullptr;  // Borrowed; null: no events recorded
};

}  // namespace courier::cache
