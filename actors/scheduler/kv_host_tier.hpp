#pragma once
// kv_manager's KV host tier (kv_manager::host()): swap preemption's blocks, the prefix cache's
// spills and promotions, write-through, and the copies they queue for the next plan. Its state
// is kv_manager's (kv_tiers.cpp); this is the part of the surface that speaks of it.
#include <cstdint>
#include <optional>
#include <vector>

#include "actors/scheduler/kv_types.hpp"
#include "cache/block_refs.hpp"

namespace courier::actors {

class kv_host_tier : public kv_part {
 public:
  explicit kv_host_tier(kv_manager& kv) : kv_part(kv) {}

  // The KV host tier (swap preemption). swap_out: host blocks for table's first n entries, the
  // copies out queued, and table released (false, nothing changed: no host tier or too few free
  // host blocks). swap_in: device blocks for host's entries and `extra` more (evicting cached
  // blocks as allocate() does) into the empty table, the copies back queued (async: for the
  // copy stream), and host released (false, nothing changed: too few blocks). The next step
  // runs the copies out first, in order, and starts the copies back after them.
  std::int32_t num_blocks() const;  // 0: no host tier
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
  // A reference on the host blocks of the entries `hashes` names, from the first while the
  // host tier keeps them: kept from eviction while held.
  cache::block_refs pin_host(const std::vector<std::uint64_t>& hashes);

};

}  // namespace courier::actors
