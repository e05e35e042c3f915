#include "actors/scheduler/kv_manager.hpp"

#include <map>
#include <stdexcept>
#include <utility>

#include "cache/block_hash.hpp"
#include "cache/block_pool.hpp"
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
  std::vector<msg::state_copy> copies;  // spills and promotions for the next step
  std::unique_ptr<cache::block_pool> host;   // the KV host tier (null: none)
  std::unique_ptr<cache::host_prefix_tier> tier;  // its prefix cache (after host: goes first)
  cache::radix_tree* tree = nullptr;              // prefix, when it is the radix tree
  std::vector<msg::block_copy> block_copies;  // swaps, spills and promotions for the next step
  std::vector<spilled_block> spilled;          // spills since the last take_spilled()
  std::uint64_t spilled_blocks = 0, promoted_blocks = 0;
  std::map<std::string, std::uint32_t> adapter_ids;  // adapter name -> namespace id (0: base)

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
  // KV blocks: a spilled snapshot keeps its prefix's blocks too); false: none.
  bool evict_snapshot() {
    if (!snaps) return false;
    const cache::snapshot_entry* victim = policy.victim(snaps->entries());
    if (!victim) return false;
    snaps->erase(victim->block);
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
    if (snaps->host_capacity() > 0 && policy.worth_spilling(*victim)) {
      if (snaps->num_free_host_slots() == 0) {
        const cache::snapshot_entry* old = policy.victim(in_tier(false));
        if (old) snaps->erase(old->block);
      }
      if (const std::optional<std::int32_t> host = snaps->spill(block)) {
        copies.push_back({true, row, *host});
        return true;
      }
    }
    snaps->erase(block);
    return true;
  }

  cache::cache_namespace ns_of(const prefix_namespace& ns) {
    std::uint32_t id = 0;
    if (!ns.adapter.empty()) {
      auto it = adapter_ids.emplace(ns.adapter, static_cast<std::uint32_t>(adapter_ids.size() + 1));
      id = it.first->second;
    }
    return {id, ns.isolation_key};
  }
};

kv_manager::kv_manager(std::int32_t num_blocks, std::int32_t block_size, bool prefix_caching,
                       snapshot_setup snapshots, std::int32_t num_host_blocks)
    : num_blocks_(num_blocks),
      block_size_(block_size),
      impl_(std::make_unique<impl>(num_blocks, block_size, prefix_caching, snapshots)) {
  if (num_host_blocks > 0) {
    impl_->host = std::make_unique<cache::block_pool>(num_host_blocks);
    // A block the device's prefix cache evicts is copied to host memory, findable by its prefix
    // (not for hybrids: their reuse goes through snapshots, which this tier does not hold).
    if (impl_->tree && !impl_->snaps) {
      impl_->tier = std::make_unique<cache::host_prefix_tier>(
          *impl_->host, static_cast<std::size_t>(block_size));
      impl_->tree->on_evict([this](cache::block_id b, std::uint64_t hash, std::uint64_t parent,
                                   const msg::token_id* tokens) {
        if (const auto to = impl_->tier->put(hash, parent, tokens)) {
          impl_->block_copies.push_back({true, b.value, to->value});
          impl_->spilled.push_back({hash, to->value});
          ++impl_->spilled_blocks;
        }
      });
    }
  }
}

kv_manager::~kv_manager() = default;

std::int32_t kv_manager::num_free() const {
  return static_cast<std::int32_t>(impl_->pool.num_free());
}

std::int32_t kv_manager::num_cached() const {
  return static_cast<std::int32_t>(impl_->prefix->stats().num_blocks);
}

cache::prefix_match kv_manager::lookup(const prefix_namespace& ns,
                                       const std::vector<msg::token_id>& tokens,
                                       std::int32_t max_tokens) {
  const cache::token_span span = cache::token_span(tokens).first(
      static_cast<std::size_t>(std::max(0, max_tokens)));
  return impl_->prefix->lookup(impl_->ns_of(ns), span);
}

cache::prefix_match kv_manager::lookup_resumable(const prefix_namespace& ns,
                                                 const std::vector<msg::token_id>& tokens,
                                                 std::int32_t max_tokens, std::uint64_t now,
                                                 resume_point& at) {
  cache::prefix_match m = lookup(ns, tokens, max_tokens);
  at = resume_point{};
  at.stored_tokens = static_cast<std::int32_t>(m.num_tokens());
  if (!impl_->snaps) {
    at.tokens = at.stored_tokens;
    return m;
  }
  // A recurrent model resumes only where a snapshot holds its state: the deepest one on the
  // device, or spilled and promoted back into a row; the match is cut there.
  cache::snapshot_index& snaps = *impl_->snaps;
  std::int32_t i = static_cast<std::int32_t>(m.blocks().size());
  while (--i >= 0) {
    const cache::block_id block = m.blocks()[static_cast<std::size_t>(i)];
    const cache::snapshot_entry* e = snaps.find(block);
    if (!e) continue;
    snaps.pin(block);  // from here, no eviction takes it
    if (e->slot < 0) {  // spilled: back into a device row, if one can be had
      if (snaps.num_free_slots() == 0 && !impl_->free_row()) {
        snaps.unpin(block);
        continue;
      }
      const std::int32_t row = *snaps.take_slot();
      impl_->copies.push_back({false, row, snaps.promote(block, row)});
      at.spilled = true;
    }
    at.slot = e->slot;
    at.block = block;
    at.kind = e->kind;
    if (e->hits == 0) impl_->policy.reused(e->kind);  // what this kind of snapshot is worth
    snaps.hit(block, now);
    break;
  }
  const std::int32_t depth = (i + 1) * block_size_;
  at.tokens = depth;
  if (depth < at.stored_tokens) {
    release_matched(std::move(m));
    m = lookup(ns, tokens, depth);
  }
  return m;
}

void kv_manager::unpin_snapshot(cache::block_id block) { impl_->snaps->unpin(block); }

void kv_manager::take(cache::prefix_match& match, cache::block_refs& table) {
  table.append(match.take_blocks());
}

void kv_manager::release_matched(cache::prefix_match match) {
  impl_->prefix->release_matched(std::move(match));
}

std::optional<cache::block_refs> kv_manager::allocate(std::int32_t n) {
  if (n <= 0) return cache::block_refs{};
  const auto want = static_cast<std::size_t>(n);
  // Cached blocks first; then snapshots, each of which keeps its prefix's blocks stored.
  while (impl_->pool.num_free() < want) {
    (void)impl_->prefix->evict(want - impl_->pool.num_free());
    if (impl_->pool.num_free() >= want || !impl_->evict_snapshot()) break;
  }
  return cache::block_refs::allocate(impl_->pool, want);
}

void kv_manager::insert(const prefix_namespace& ns, const std::vector<msg::token_id>& tokens,
                        cache::block_refs& table, std::int32_t num_full_blocks,
                        std::int32_t num_cached_tokens) {
  if (num_full_blocks <= 0) return;
  const auto n = static_cast<std::size_t>(num_full_blocks) * static_cast<std::size_t>(block_size_);
  (void)impl_->prefix->insert(impl_->ns_of(ns), cache::token_span(tokens).first(n), table,
                              static_cast<std::size_t>(num_cached_tokens));
}

void kv_manager::truncate(cache::block_refs& table, std::int32_t n) {
  table.truncate(static_cast<std::size_t>(std::max(0, n)));
}

void kv_manager::release(cache::block_refs& table) { impl_->prefix->release(std::move(table)); }

void kv_manager::evict_all() {
  while (impl_->evict_snapshot()) {
  }
  (void)impl_->prefix->evict(impl_->pool.num_total());
}

std::optional<std::int32_t> kv_manager::take_snapshot_slot(bool may_evict) {
  if (!impl_->snaps) return std::nullopt;
  if (impl_->snaps->num_free_slots() == 0 && !(may_evict && impl_->free_row())) {
    return std::nullopt;
  }
  return impl_->snaps->take_slot();
}

std::int32_t kv_manager::num_spilled_snapshots() const {
  return impl_->snaps ? impl_->snaps->num_spilled() : 0;
}

std::int32_t kv_manager::num_host_blocks() const {
  return impl_->host ? static_cast<std::int32_t>(impl_->host->num_total()) : 0;
}

std::int32_t kv_manager::num_free_host() const {
  return impl_->host ? static_cast<std::int32_t>(impl_->host->num_free()) : 0;
}

bool kv_manager::swap_out(cache::block_refs& table, std::int32_t n, cache::block_refs& host) {
  if (!impl_->host || n <= 0 || static_cast<std::size_t>(n) > table.size() || !host.empty()) {
    return false;
  }
  const auto want = static_cast<std::size_t>(n);
  // A running sequence's KV comes before cached prefixes: the tier makes room.
  if (impl_->tier && impl_->host->num_free() < want) {
    impl_->tier->evict(want - impl_->host->num_free());
  }
  auto to = cache::block_refs::allocate(*impl_->host, want);
  if (!to) return false;
  for (std::int32_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    impl_->block_copies.push_back({true, table[k].value, (*to)[k].value});
  }
  host = std::move(*to);
  release(table);  // read by the copies before any later row writes them: they run first
  return true;
}

bool kv_manager::swap_in(cache::block_refs& host, std::int32_t extra, cache::block_refs& table) {
  if (!impl_->host || host.empty() || !table.empty()) return false;
  auto fresh = allocate(static_cast<std::int32_t>(host.size()) + std::max(0, extra));
  if (!fresh) return false;
  for (std::size_t i = 0; i < host.size(); ++i) {
    impl_->block_copies.push_back({false, (*fresh)[i].value, host[i].value});
  }
  table = std::move(*fresh);
  host.release();  // its host blocks are read by the copies before any later swap writes them
  return true;
}

std::vector<std::uint64_t> kv_manager::host_continuation(const prefix_namespace& ns,
                                                         const std::vector<msg::token_id>& tokens,
                                                         std::int32_t matched_tokens,
                                                         std::int32_t max_tokens) {
  std::vector<std::uint64_t> found;
  if (!impl_->tier || impl_->tier->size() == 0) return found;
  const auto bs = static_cast<std::size_t>(block_size_);
  std::uint64_t h = cache::namespace_hash(impl_->ns_of(ns));
  const auto matched = static_cast<std::size_t>(matched_tokens);
  for (std::size_t at = 0; at + bs <= matched; at += bs) h = cache::chain_hash(h, &tokens[at], bs);
  for (std::size_t at = matched; at + bs <= static_cast<std::size_t>(max_tokens); at += bs) {
    const std::uint64_t next = cache::chain_hash(h, &tokens[at], bs);
    if (!impl_->tier->contains(h, next, &tokens[at])) break;
    found.push_back(next);
    h = next;
  }
  return found;
}

std::int32_t kv_manager::promote(const std::vector<std::uint64_t>& hashes,
                                 const cache::block_refs& fresh) {
  std::size_t i = 0;
  for (; i < hashes.size() && i < fresh.size(); ++i) {
    cache::block_refs from = impl_->tier->take(hashes[i]);
    if (from.empty()) break;  // evicted meanwhile (making room for fresh)
    impl_->block_copies.push_back({false, fresh[i].value, from[0].value});
    ++impl_->promoted_blocks;
  }  // each `from` goes back to the pool here: the copy queued reads it first
  return static_cast<std::int32_t>(i);
}

std::vector<spilled_block> kv_manager::take_spilled() {
  for (const spilled_block& s : impl_->spilled) {
    impl_->tier->set_in_flight(s.hash, cache::block_id{s.host_block}, true);
  }
  return std::exchange(impl_->spilled, {});
}

void kv_manager::spilled_answered(const std::vector<spilled_block>& spilled, bool ok) {
  if (!impl_->tier) return;
  for (const spilled_block& s : spilled) {
    if (ok) {
      impl_->tier->set_in_flight(s.hash, cache::block_id{s.host_block}, false);
    } else {
      impl_->tier->forget(s.hash, cache::block_id{s.host_block});
    }
  }
}

std::uint64_t kv_manager::spilled_blocks() const { return impl_->spilled_blocks; }
std::uint64_t kv_manager::promoted_blocks() const { return impl_->promoted_blocks; }
std::int32_t kv_manager::num_host_cached() const {
  return impl_->tier ? static_cast<std::int32_t>(impl_->tier->size()) : 0;
}

std::vector<msg::block_copy> kv_manager::take_block_copies() {
  return std::exchange(impl_->block_copies, {});
}

std::vector<msg::state_copy> kv_manager::take_state_copies() {
  return std::exchange(impl_->copies, {});
}

void kv_manager::forget_snapshots() {
  if (!impl_->snaps) return;
  for (const cache::snapshot_entry* e : impl_->snaps->entries()) {
    if (e->pins == 0) impl_->snaps->erase(e->block);
  }
}

void kv_manager::give_back_snapshot_slot(std::int32_t slot) { impl_->snaps->give_back(slot); }

bool kv_manager::worth_taking(cache::snapshot_kind kind) {
  return impl_->snaps && impl_->policy.worth_taking(kind);
}

bool kv_manager::add_snapshot(const cache::block_refs& table, std::int32_t depth,
                              std::int32_t slot, cache::snapshot_kind kind, std::uint64_t now) {
  const std::int32_t n = depth / block_size_;
  if (depth <= 0 || depth % block_size_ != 0 || n > static_cast<std::int32_t>(table.size()) ||
      !impl_->prefix->stores(table[static_cast<std::size_t>(n - 1)])) {
    impl_->snaps->give_back(slot);
    return false;
  }
  if (!impl_->snaps->insert(table[static_cast<std::size_t>(n - 1)], depth, slot, kind, now)) {
    return false;
  }
  impl_->policy.kept(kind);
  return true;
}

std::int32_t kv_manager::snapshot_capacity() const {
  return impl_->snaps ? impl_->snaps->capacity() : 0;
}

std::int32_t kv_manager::num_snapshots() const {
  return impl_->snaps ? static_cast<std::int32_t>(impl_->snaps->size()) - impl_->snaps->num_spilled()
                      : 0;
}

std::int32_t kv_manager::num_free_snapshot_slots() const {
  return impl_->snaps ? impl_->snaps->num_free_slots() : 0;
}

void kv_manager::check_invariants() const {
  impl_->pool.check_invariants();
  if (impl_->host) impl_->host->check_invariants();
  if (impl_->tier) impl_->tier->check_invariants();
  impl_->prefix->check_invariants();
  if (!impl_->snaps) return;
  impl_->snaps->check_invariants();
  for (const cache::snapshot_entry* e : impl_->snaps->entries()) {
    if (!impl_->prefix->stores(e->block)) {
      throw std::logic_error("kv_manager: a snapshot's prefix is not stored");
    }
  }
}


}  // namespace courier::actors
