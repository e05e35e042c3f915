#include "actors/scheduler/kv_manager.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include "actors/scheduler/kv_manager_impl.hpp"
#include "cache/block_hash.hpp"

namespace courier::actors {

namespace {

// The first max_tokens of `tokens` (none for a negative count): what a lookup, peek or pin asks
// about.
cache::token_span prompt_head(const std::vector<msg::token_id>& tokens,
                              std::int32_t max_tokens) {
  return cache::token_span(tokens).first(static_cast<std::size_t>(std::max(0, max_tokens)));
}

}  // namespace

kv_manager::kv_manager(std::int32_t num_blocks, std::int32_t block_size, bool prefix_caching,
                       snapshot_setup snapshots, std::int32_t num_host_blocks,
                       disk_tier_setup disk)
    : num_blocks_(num_blocks),
      block_size_(block_size),
      impl_(std::make_unique<impl>(num_blocks, block_size, prefix_caching, snapshots)) {
  init_tiers(num_host_blocks, std::move(disk));
}

kv_manager::~kv_manager() = default;


cache::prefix_match kv_manager::lookup(const prefix_namespace& ns,
                                       const std::vector<msg::token_id>& tokens,
                                       std::int32_t max_tokens) {
  return impl_->prefix->lookup(impl_->ns_of(ns), prompt_head(tokens, max_tokens));
}

kv_manager::prompt_resume kv_manager::resume(const prefix_namespace& ns,
                                             const std::vector<msg::token_id>& tokens,
                                             bool recurrent, std::uint64_t now) {
  prompt_resume l;
  l.lookup = true;
  // Leave at least the last token to compute: its logits give the next token.
  const auto last = static_cast<std::int32_t>(tokens.size()) - 1;
  l.match = lookup_resumable(ns, tokens, last, now, l.at);
  l.matched = static_cast<std::int32_t>(l.match.num_tokens());
  if (!recurrent) {
    l.from_host = host_continuation(ns, tokens, l.matched, last);
    return l;
  }
  l.deeper = snapshots_.find_host_resume(ns, tokens, l.at, last, now);
  if (!l.deeper.tokens) return l;
  // Deeper in the host tiers: the detached snapshot's state, the device's blocks up to it and
  // the host tier's after them (no device snapshot restored).
  if (l.at.slot >= 0) unpin_snapshot(l.at.block);
  release_matched(std::move(l.match));
  l.match = lookup(ns, tokens, l.deeper.device_tokens);
  l.matched = static_cast<std::int32_t>(l.match.num_tokens());
  l.from_host = l.deeper.from_host;
  l.host_pins = host_.pin_host(l.from_host);  // kept while fresh blocks are found for them
  l.at.slot = -1;
  l.at.tokens = l.deeper.tokens;
  l.at.kind = l.deeper.kind;
  l.at.spilled = true;
  l.at.from_host_state = true;
  l.at.stored_tokens = std::max(l.at.stored_tokens, l.deeper.tokens);
  return l;
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

std::int32_t kv_manager::peek(const prefix_namespace& ns, const std::vector<msg::token_id>& tokens,
                             std::int32_t max_tokens) {
  return static_cast<std::int32_t>(
      impl_->prefix->peek_matched_tokens(impl_->ns_of(ns), prompt_head(tokens, max_tokens)));
}

cache::prefix_match kv_manager::pin(const prefix_namespace& ns,
                                    const std::vector<msg::token_id>& tokens,
                                    std::int32_t max_tokens) {
  return impl_->prefix->pin_prefix(impl_->ns_of(ns), prompt_head(tokens, max_tokens));
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

std::optional<std::int32_t> kv_snapshots::take_snapshot_slot(bool may_evict) {
  kv_manager::impl& d = *kv_.impl_;
  if (!d.snaps) return std::nullopt;
  if (d.snaps->num_free_slots() == 0 && !(may_evict && d.free_row())) {
    return std::nullopt;
  }
  return d.snaps->take_slot();
}

std::int32_t kv_snapshots::num_spilled_snapshots() const {
  const kv_manager::impl& d = *kv_.impl_;
  return d.snaps ? d.snaps->num_spilled() : 0;
}

std::vector<msg::state_copy> kv_snapshots::take_state_copies() {
  return std::exchange(kv_.impl_->copies, {});
}

std::optional<std::int32_t> kv_snapshots::take_host_state_row() {
  kv_manager::impl& d = *kv_.impl_;
  cache::snapshot_index* snaps = d.snaps.get();
  // A running sequence's state before a cached one.
  if (!snaps || snaps->host_capacity() == 0 || !d.free_host_row()) return std::nullopt;
  return snaps->take_host();
}

void kv_snapshots::give_back_host_state_row(std::int32_t host_row) {
  if (host_row >= 0) kv_.impl_->snaps->give_back_host(host_row);
}

void kv_snapshots::copy_state(bool to_host, std::int32_t row, std::int32_t host_row) {
  kv_.impl_->copies.push_back({to_host, row, host_row});
}

bool kv_snapshots::host_state_row_available() const {
  const kv_manager::impl& d = *kv_.impl_;
  const cache::snapshot_index* snaps = d.snaps.get();
  if (!snaps || snaps->host_capacity() == 0) return false;
  return snaps->num_free_host_slots() > 0 || d.host_row_victim() != nullptr;
}

std::int32_t kv_snapshots::num_lent_host_state_rows() const {
  const kv_manager::impl& d = *kv_.impl_;
  return d.snaps ? d.snaps->num_lent_host() : 0;
}

void kv_snapshots::forget_snapshots() {
  kv_manager::impl& d = *kv_.impl_;
  if (!d.snaps) return;
  for (const cache::snapshot_entry* e : d.snaps->entries()) {
    if (e->pins == 0) d.snaps->erase(e->block);
  }
}

void kv_snapshots::give_back_snapshot_slot(std::int32_t slot) {
  kv_.impl_->snaps->give_back(slot);
}

bool kv_snapshots::worth_taking(cache::snapshot_kind kind) {
  kv_manager::impl& d = *kv_.impl_;
  return d.snaps && d.policy.worth_taking(kind);
}

bool kv_snapshots::add_snapshot(const prefix_namespace& ns,
                                const std::vector<msg::token_id>& tokens,
                                const cache::block_refs& table, std::int32_t depth,
                                std::int32_t slot, cache::snapshot_kind kind, std::uint64_t now) {
  kv_manager::impl& d = *kv_.impl_;
  const std::int32_t n = depth / kv_.block_size_;
  if (depth <= 0 || depth % kv_.block_size_ != 0 || n > static_cast<std::int32_t>(table.size()) ||
      !d.prefix->stores(table[static_cast<std::size_t>(n - 1)])) {
    d.snaps->give_back(slot);
    return false;
  }
  const std::uint64_t hash = d.detaching() ? kv_.prefix_hash(ns, tokens, depth) : 0;
  if (!d.snaps->insert(table[static_cast<std::size_t>(n - 1)], depth, slot, kind, now, hash)) {
    return false;
  }
  d.policy.kept(kind);
  return true;
}

std::int32_t kv_snapshots::snapshot_depth(const cache::block_refs& table,
                                          std::int32_t tokens) const {
  const kv_manager::impl& d = *kv_.impl_;
  if (!d.snaps) return 0;
  const auto n =
      std::min(table.size(), static_cast<std::size_t>(std::max(0, tokens / kv_.block_size_)));
  const std::vector<cache::block_id> path(table.ids().begin(),
                                          table.ids().begin() + static_cast<std::ptrdiff_t>(n));
  return (d.snaps->deepest(path) + 1) * kv_.block_size_;
}

std::int32_t kv_snapshots::snapshot_capacity() const {
  const kv_manager::impl& d = *kv_.impl_;
  return d.snaps ? d.snaps->capacity() : 0;
}

std::int32_t kv_snapshots::num_snapshots() const {
  const kv_manager::impl& d = *kv_.impl_;
  return d.snaps ? static_cast<std::int32_t>(d.snaps->size()) - d.snaps->num_spilled() : 0;
}

std::int32_t kv_snapshots::num_free_snapshot_slots() const {
  const kv_manager::impl& d = *kv_.impl_;
  return d.snaps ? d.snaps->num_free_slots() : 0;
}

void kv_manager::check_invariants() const {
  impl_->pool.check_invariants();
  if (impl_->host) impl_->host->check_invariants();
  if (impl_->tier) impl_->tier->check_invariants();
  if (impl_->disk) {
    impl_->disk->check_invariants();
    if (impl_->disk_writes.size() > impl_->max_disk_writes) {
      throw std::logic_error("kv_manager: more disk writes in flight than allowed");
    }
  }
  impl_->prefix->check_invariants();
  if (!impl_->snaps) return;
  impl_->snaps->check_invariants();
  for (const cache::snapshot_entry* e : impl_->snaps->entries()) {
    if (!impl_->prefix->stores(e->block)) {
      throw std::logic_error("kv_manager: a snapshot's prefix is not stored");
    }
  }
}


snapshot_setup snapshot_setup_for(const msg::engine_ready& ready, double eviction_alpha) {
  snapshot_setup s;
  if (!ready.recurrent) return s;
  s.first_slot = ready.state_slots;
  s.num_slots = ready.snapshot_slots;
  s.num_host_slots = ready.host_snapshot_slots;
  s.policy.costs.device_flops = ready.device_flops;
  s.policy.costs.host_bytes_per_s = ready.host_bytes_per_s;
  s.policy.alpha = eviction_alpha;
  s.policy.costs.snapshot_bytes = std::max(ready.snapshot_bytes, 1.0);
  s.policy.costs.kv_bytes_per_token = ready.kv_bytes_per_token;
  s.policy.costs.linear_flops_per_token = std::max(ready.linear_flops_per_token, 1.0);
  s.policy.costs.attention_flops_per_pair = ready.attention_flops_per_pair;
  return s;
}

void kv_manager::record_cache_events(cache::cache_event_log* log) {
  if (log) {
    cache_snapshot(*log);
    if (log->empty()) {  // no prefix cache: still an all-cleared first
      cache::cache_event cleared;
      cleared.what = cache::cache_event::kind::cleared;
      log->push_back(std::move(cleared));
    }
  }
  if (impl_->tree) impl_->tree->record_events(log);
  if (impl_->tier) impl_->tier->record_events(log);
  if (impl_->disk) impl_->disk->record_events(log);
}

void kv_manager::cache_snapshot(cache::cache_event_log& log) const {
  if (impl_->tree) impl_->tree->snapshot_events(log);
  if (impl_->tier) impl_->tier->snapshot_events(log);
  if (impl_->disk) impl_->disk->snapshot_events(log);
}

}  // namespace courier::actors
