#pragma once
// kv_manager's private state: one state behind kv_manager and its tiers' classes (kv_host_tier,
// kv_disk_tier, kv_snapshots, each kv_manager's friend), in two files: kv_manager.cpp (the
// device's blocks, the prefix cache, snapshots) and kv_tiers.cpp (the host and disk tiers,
// swaps).
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/scheduler/kv_manager.hpp"
#include "cache/block_pool.hpp"
#include "cache/disk_prefix_tier.hpp"
#include "cache/host_prefix_tier.hpp"
#include "cache/no_prefix_cache.hpp"
#include "cache/radix_tree.hpp"

namespace courier::actors {

// Declaration order is destruction order reversed: the snapshots and the prefix cache drop
// their references before the pool goes.
struct kv_manager::impl {
  cache::block_pool pool;
  std::unique_ptr<cache::prefix_cache> prefix;
  std::unique_ptr<cache::snapshot_index> snaps;  // hybrid models with prefix caching only
  snapshot_policy policy;
  std::vector<msg::state_copy> copies;            // spills and promotions for the next step
  std::unique_ptr<cache::block_pool> host;        // the KV host tier (null: none)
  std::unique_ptr<cache::host_prefix_tier> tier;  // its prefix cache (after host: goes first)
  cache::radix_tree* tree = nullptr;              // prefix, when it is the radix tree
  std::vector<msg::block_copy> block_copies;      // swaps, spills and promotions for the next step
  // A reference on each host block those copies name, until the step that runs them answers
  // (take_copy_holds): no disk read, which writes host memory outside the engine's stream
  // order, may be given a block a queued copy still reads or writes.
  cache::block_refs copy_holds;
  void queue_copy(bool to_host, std::int32_t block, std::int32_t host_block) {
    block_copies.push_back({to_host, block, host_block});
    copy_holds.append(cache::block_refs::share(*host, {cache::block_id{host_block}}));
  }
  async_copy_batch async;  // copies back from host, for the next plan's copy stream
  void queue_copy_async(bool to_host, std::int32_t block, std::int32_t host_block) {
    async.copies.push_back({to_host, block, host_block});
    async.device.append(cache::block_refs::share(pool, {cache::block_id{block}}));
    async.host.append(cache::block_refs::share(*host, {cache::block_id{host_block}}));
  }
  std::vector<spilled_block> spilled;             // spills since the last take_spilled()
  std::uint64_t spilled_blocks = 0, promoted_blocks = 0, written_through = 0;
  std::map<std::string, std::uint32_t> adapter_ids;  // adapter name -> namespace id (0: base)
  std::map<std::uint32_t, std::string> adapter_names;
  // The disk tier behind the host tier (null: none), and its copies in flight by chain hash,
  // each holding its host block (declared after host: they go first).
  std::unique_ptr<cache::disk_prefix_tier> disk;
  struct disk_pending {
    std::int64_t slot = -1;
    cache::block_refs host;
  };
  std::unordered_map<std::uint64_t, disk_pending> disk_writes, disk_reads;
  std::vector<msg::disk_op> disk_ops;  // reads started since the last take_disk_ops()
  std::size_t max_disk_writes = 64;
  disk_counters disk_stats;

  impl(std::int32_t num_blocks, std::int32_t block_size, bool prefix_caching,
       const snapshot_setup& s)
      : pool(num_blocks), policy(s.policy) {
    if (prefix_caching) {
      auto t = std::make_unique<cache::radix_tree>(pool, static_cast<std::size_t>(block_size));
      tree = t.get();
      prefix = std::move(t);
      if (s.num_slots > 0) {
        snaps = std::make_unique<cache::snapshot_index>(pool, s.first_slot, s.num_slots,
                                                        s.num_host_slots);
      }
    } else {
      prefix = std::make_unique<cache::no_prefix_cache>(static_cast<std::size_t>(block_size));
    }
  }

  // The snapshots on the device (on_device) or spilled.
  std::vector<const cache::snapshot_entry*> in_tier(bool on_device) const {
    std::vector<const cache::snapshot_entry*> out;
    for (const cache::snapshot_entry* e : snaps->entries()) {
      if ((e->slot >= 0) == on_device) out.push_back(e);
    }
    return out;
  }

  // Gives up the policy's choice among the snapshots not being restored, in either tier (for
  // KV blocks: a spilled snapshot keeps its prefix's blocks too); false: none. With a KV host
  // tier (detaching) a device snapshot worth it is detached instead: its prefix's blocks may
  // go to host memory, where a later prompt finds both again.
  bool evict_snapshot() {
    if (!snaps) return false;
    const cache::snapshot_entry* victim = policy.victim(snaps->entries());
    if (!victim) return false;
    let_go(*victim);
    return true;
  }

  // Lets a snapshot go: detached when that is worth it and possible (a device one, with a KV
  // host tier), else dropped.
  void let_go(const cache::snapshot_entry& victim) {
    if (detaching() && victim.slot >= 0 && policy.worth_spilling(victim) && detach(victim)) {
      return;
    }
    snaps->erase(victim.block);
  }

  // A hybrid with a KV host tier keeps evicted snapshots by their prefix's chain hash
  // (snapshot_index::detach), not by a device block, so the prefix's blocks may leave the device
  // and come back with them.
  bool detaching() const { return snaps && tier; }
  std::vector<spilled_block> detached;  // detached since take_detached(): (hash, host row)

  // The least useful snapshot kept in a host row (spilled or detached, not pinned); null: none.
  const cache::snapshot_entry* host_row_victim() const {
    std::vector<const cache::snapshot_entry*> all = in_tier(false);
    for (const cache::snapshot_entry* e : snaps->detached()) all.push_back(e);
    return policy.victim(all);
  }

  // A free host row, dropping host_row_victim() when none is; false: none can be had.
  bool free_host_row() {
    if (snaps->num_free_host_slots() > 0) return true;
    const cache::snapshot_entry* old = host_row_victim();
    if (!old) return false;
    if (old->block.value >= 0) {
      snaps->erase(old->block);
    } else {
      snaps->erase_detached(old->hash);
    }
    return true;
  }

  // Detaches a device snapshot into a host row, its copy queued (in order with the spills and
  // promotions); false (no change): no host row.
  bool detach(const cache::snapshot_entry& e) {
    const cache::block_id block = e.block;
    const std::uint64_t hash = e.hash;
    if (hash == 0 || !free_host_row()) return false;
    const auto moved = snaps->detach(block);
    if (!moved) return false;
    copies.push_back({true, moved->first, moved->second});
    detached.push_back({hash, moved->second});
    return true;
  }

  // Frees a device row: the policy's choice among the snapshots on the device goes to the host
  // tier when the copy repays itself (the oldest spilled one making room there), else is
  // dropped; false: nothing to give up.
  bool free_row() {
    const cache::snapshot_entry* victim = policy.victim(in_tier(true));
    if (!victim) return false;
    const cache::block_id block = victim->block;
    const std::int32_t row = victim->slot;
    if (detaching()) {
      let_go(*victim);
      return true;
    }
    if (policy.worth_spilling(*victim) && free_host_row()) {
      if (const std::optional<std::int32_t> host = snaps->spill(block)) {
        copies.push_back({true, row, *host});
        return true;
      }
    }
    snaps->erase(block);
    return true;
  }

  // Adapter ids are cache::adapter_namespace_id (the next free value on a clash), so that the
  // disk tier's keys, which outlive the process, name the same adapter in the next run, and a
  // front end's router hashes an adapter's prompts as this replica does.
  cache::cache_namespace ns_of(const prefix_namespace& ns) {
    std::uint32_t id = 0;
    if (!ns.adapter.empty()) {
      auto it = adapter_ids.find(ns.adapter);
      if (it == adapter_ids.end()) {
        std::uint32_t h = cache::adapter_namespace_id(ns.adapter);
        while (h == 0 || adapter_names.count(h)) ++h;
        adapter_names.emplace(h, ns.adapter);
        it = adapter_ids.emplace(ns.adapter, h).first;
      }
      id = it->second;
    }
    return {id, ns.isolation_key};
  }
};

}  // namespace courier::actors
