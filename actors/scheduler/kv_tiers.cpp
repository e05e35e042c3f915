#include <algorithm>
#include <stdexcept>
#include <unordered_set>
#include <utility>

#include "actors/scheduler/kv_manager_impl.hpp"
#include "cache/block_hash.hpp"

// kv_manager's host and disk tiers: swaps, the host tier's prefix cache, the disk tier behind it.
namespace courier::actors {

void kv_manager::init_tiers(std::int32_t num_host_blocks, disk_tier_setup disk) {
  if (num_host_blocks <= 0) return;
  impl_->host = std::make_unique<cache::block_pool>(num_host_blocks);
  // A block the device's prefix cache evicts is copied to host memory, findable by its prefix
  // (a hybrid's with a detached snapshot at its end: find_host_resume).
  if (!impl_->tree) return;
  const auto bs = static_cast<std::size_t>(block_size_);
  const bool with_disk = disk.num_slots > 0;
  impl_->tier = std::make_unique<cache::host_prefix_tier>(*impl_->host, bs, with_disk);
  impl_->tree->on_evict([this](cache::block_id b, std::uint64_t hash, std::uint64_t parent,
                               const msg::token_id* tokens) {
    if (const auto to = impl_->tier->put(hash, parent, tokens)) {
      impl_->queue_copy(true, b.value, to->value);
      impl_->spilled.push_back({hash, to->value});
      ++impl_->spilled_blocks;
      if (impl_->disk && impl_->disk->has(hash)) impl_->tier->set_on_disk(hash);
    }
  });
  if (!with_disk) return;
  impl_->disk = std::make_unique<cache::disk_prefix_tier>(disk.num_slots, bs);
  impl_->max_disk_writes = static_cast<std::size_t>(
      std::max(1, disk.max_writes_in_flight > 0 ? disk.max_writes_in_flight : num_host_blocks / 8));
  for (const disk_entry& e : disk.restored) {
    if (impl_->disk->restore(e.slot, e.hash, e.parent, e.tokens)) ++impl_->disk_stats.restored;
  }
}

std::int32_t kv_host_tier::num_blocks() const {
  const kv_manager::impl& d = *kv_.impl_;
  return d.host ? static_cast<std::int32_t>(d.host->num_total()) : 0;
}

bool kv_host_tier::swap_out(cache::block_refs& table, std::int32_t n, cache::block_refs& host) {
  kv_manager::impl& d = *kv_.impl_;
  if (!d.host || n <= 0 || static_cast<std::size_t>(n) > table.size() || !host.empty()) {
    return false;
  }
  const auto want = static_cast<std::size_t>(n);
  // A running sequence's KV comes before cached prefixes: the tier makes room.
  if (d.tier && d.host->num_free() < want) {
    d.tier->evict(want - d.host->num_free());
  }
  auto to = cache::block_refs::allocate(*d.host, want);
  if (!to) return false;
  for (std::int32_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    d.queue_copy(true, table[k].value, (*to)[k].value);
  }
  host = std::move(*to);
  kv_.release(table);  // read by the copies before any later row writes them: they run first
  return true;
}

bool kv_host_tier::swap_in(cache::block_refs& host, std::int32_t extra, cache::block_refs& table) {
  kv_manager::impl& d = *kv_.impl_;
  if (!d.host || host.empty() || !table.empty()) return false;
  auto fresh = kv_.allocate(static_cast<std::int32_t>(host.size()) + std::max(0, extra));
  if (!fresh) return false;
  for (std::size_t i = 0; i < host.size(); ++i) {
    d.queue_copy_async(false, (*fresh)[i].value, host[i].value);
  }
  table = std::move(*fresh);
  host.release();  // the batch holds its host blocks until the copies are done
  return true;
}

namespace {

// The chain hash of `tokens`' first `from` tokens (whole blocks) in the namespace `ns_hash`.
std::uint64_t chain_at(std::uint64_t ns_hash, const std::vector<msg::token_id>& tokens,
                       std::size_t bs, std::int32_t from) {
  std::uint64_t h = ns_hash;
  for (std::size_t at = 0; at + bs <= static_cast<std::size_t>(from); at += bs) {
    h = cache::chain_hash(h, &tokens[at], bs);
  }
  return h;
}

// The chain hashes of the whole blocks of `tokens` from `from` (whose prefix hashes to `h`) on,
// within max_tokens, while `kept(parent_hash, hash, block's tokens)` says a tier has them.
template <class Kept>
std::vector<std::uint64_t> continuation(std::uint64_t h, const std::vector<msg::token_id>& tokens,
                                        std::size_t bs, std::int32_t from, std::int32_t max_tokens,
                                        Kept kept) {
  std::vector<std::uint64_t> found;
  for (auto at = static_cast<std::size_t>(from); at + bs <= static_cast<std::size_t>(max_tokens);
       at += bs) {
    const std::uint64_t next = cache::chain_hash(h, &tokens[at], bs);
    if (!kept(h, next, &tokens[at])) break;
    found.push_back(next);
    h = next;
  }
  return found;
}

}  // namespace

std::vector<std::uint64_t> kv_manager::host_continuation(const prefix_namespace& ns,
                                                         const std::vector<msg::token_id>& tokens,
                                                         std::int32_t matched_tokens,
                                                         std::int32_t max_tokens) {
  if (!impl_->tier || impl_->tier->size() == 0) return {};
  const auto bs = static_cast<std::size_t>(block_size_);
  return continuation(chain_at(cache::namespace_hash(impl_->ns_of(ns)), tokens, bs, matched_tokens),
                      tokens, bs, matched_tokens, max_tokens,
                      [&](std::uint64_t parent, std::uint64_t h, const msg::token_id* t) {
                        return impl_->tier->contains(parent, h, t);
                      });
}

std::uint64_t kv_manager::prefix_hash(const prefix_namespace& ns,
                                      const std::vector<msg::token_id>& tokens, std::int32_t n) {
  return chain_at(cache::namespace_hash(impl_->ns_of(ns)), tokens,
                  static_cast<std::size_t>(block_size_), n);
}

host_resume kv_snapshots::find_host_resume(const prefix_namespace& ns,
                                           const std::vector<msg::token_id>& tokens,
                                           const resume_point& at, std::int32_t max_tokens,
                                           std::uint64_t now) {
  kv_manager::impl& d = *kv_.impl_;
  host_resume best;
  if (!d.detaching() || d.snaps->num_detached() == 0) return best;
  const auto bs = static_cast<std::size_t>(kv_.block_size_);
  std::uint64_t h = cache::namespace_hash(d.ns_of(ns));
  std::vector<std::uint64_t> host;  // blocks past the device's stored prefix, in the host tier
  for (std::size_t at_tok = 0; at_tok + bs <= static_cast<std::size_t>(std::max(0, max_tokens));
       at_tok += bs) {
    const msg::token_id* t = &tokens[at_tok];
    const std::uint64_t next = cache::chain_hash(h, t, bs);
    if (at_tok >= static_cast<std::size_t>(at.stored_tokens)) {
      if (!d.tier->contains(h, next, t)) break;
      host.push_back(next);
    }
    h = next;
    const auto depth = static_cast<std::int32_t>(at_tok + bs);
    const cache::snapshot_entry* e = d.snaps->find_detached(next);
    if (e && e->ready && depth > at.tokens) {
      best.tokens = depth;
      best.host_row = e->host_slot;
      best.hash = next;
      best.kind = e->kind;
      best.from_host = host;
    }
  }
  if (best.tokens == 0) return best;
  best.device_tokens = std::min(best.tokens, at.stored_tokens);
  const cache::snapshot_entry* e = d.snaps->find_detached(best.hash);
  if (e->hits == 0) d.policy.reused(e->kind);
  d.snaps->hit_detached(best.hash, now);
  d.snaps->pin_detached(best.hash);
  return best;
}

void kv_snapshots::unpin_detached(std::uint64_t hash) {
  kv_.impl_->snaps->unpin_detached(hash);
}

std::int32_t kv_snapshots::deepest_detached(const std::vector<std::uint64_t>& hashes) const {
  const kv_manager::impl& d = *kv_.impl_;
  if (!d.snaps) return -1;
  for (std::size_t i = hashes.size(); i-- > 0;) {
    if (d.snaps->find_detached(hashes[i])) return static_cast<std::int32_t>(i);
  }
  return -1;
}

std::vector<spilled_block> kv_snapshots::take_detached() {
  return std::exchange(kv_.impl_->detached, {});
}

void kv_snapshots::detached_answered(const std::vector<spilled_block>& detached, bool ok) {
  kv_manager::impl& d = *kv_.impl_;
  if (!d.snaps) return;
  for (const spilled_block& b : detached) d.snaps->set_ready(b.hash, b.host_block, ok);
}

std::int32_t kv_snapshots::num_detached_snapshots() const {
  const kv_manager::impl& d = *kv_.impl_;
  return d.snaps ? static_cast<std::int32_t>(d.snaps->num_detached()) : 0;
}

std::int32_t kv_host_tier::promote(const std::vector<std::uint64_t>& hashes,
                                   const cache::block_refs& fresh) {
  kv_manager::impl& d = *kv_.impl_;
  std::size_t i = 0;
  for (; i < hashes.size() && i < fresh.size(); ++i) {
    bool from_disk = false;
    const cache::block_refs from = d.tier->share(hashes[i], &from_disk);
    if (from.empty()) break;  // evicted meanwhile (making room for fresh)
    if (from_disk) ++d.disk_stats.promoted;
    d.queue_copy_async(false, fresh[i].value, from[0].value);
    ++d.promoted_blocks;
  }  // the entries stay in the tier, their blocks held by the batch until they are copied
  return static_cast<std::int32_t>(i);
}

std::vector<spilled_block> kv_host_tier::take_spilled() {
  kv_manager::impl& d = *kv_.impl_;
  for (const spilled_block& s : d.spilled) {
    d.tier->set_in_flight(s.hash, cache::block_id{s.host_block}, true);
  }
  return std::exchange(d.spilled, {});
}

void kv_host_tier::spilled_answered(const std::vector<spilled_block>& spilled, bool ok) {
  kv_manager::impl& d = *kv_.impl_;
  if (!d.tier) return;
  for (const spilled_block& s : spilled) {
    if (ok) {
      d.tier->set_in_flight(s.hash, cache::block_id{s.host_block}, false);
    } else {
      d.tier->forget(s.hash, cache::block_id{s.host_block});
    }
  }
}

std::vector<msg::block_copy> kv_host_tier::take_block_copies() {
  return std::exchange(kv_.impl_->block_copies, {});
}

cache::block_refs kv_host_tier::take_copy_holds() {
  return std::move(kv_.impl_->copy_holds);
}

async_copy_batch kv_host_tier::take_async_copies() {
  kv_manager::impl& d = *kv_.impl_;
  for (const spilled_block& w : d.async.written) {
    d.tier->set_in_flight(w.hash, cache::block_id{w.host_block}, true);
  }
  return std::exchange(d.async, {});
}

void kv_host_tier::write_through(const prefix_namespace& ns,
                                 const std::vector<msg::token_id>& tokens,
                                 const cache::block_refs& table, std::int32_t from_block,
                                 std::int32_t to_block) {
  kv_manager::impl& d = *kv_.impl_;
  if (!d.tier || from_block >= to_block) return;
  const auto bs = static_cast<std::size_t>(kv_.block_size_);
  // A tier under twice the device's blocks takes blocks in only into free host blocks: evicting
  // an entry for a block the device still holds would trade a likely hit for a copy of what the
  // device has (that block is copied out when evicted instead). A larger one is mostly what the
  // device evicted either way, and makes room as a spill would (SGLang HiCache's host-to-device
  // ratio is 2 by default for the same reason).
  const bool free_only = d.host->num_total() < 2 * d.pool.num_total();
  std::uint64_t h =
      chain_at(cache::namespace_hash(d.ns_of(ns)), tokens, bs, from_block * kv_.block_size_);
  for (auto i = static_cast<std::size_t>(from_block); i < static_cast<std::size_t>(to_block); ++i) {
    if (free_only && d.host->num_free() == 0) break;
    const msg::token_id* t = &tokens[i * bs];
    const std::uint64_t next = cache::chain_hash(h, t, bs);
    if (const auto to = d.tier->put(next, h, t)) {
      d.queue_copy_async(true, table[i].value, to->value);
      d.async.written.push_back({next, to->value});
      ++d.spilled_blocks;
      ++d.written_through;
      if (d.disk && d.disk->has(next)) d.tier->set_on_disk(next);
    }
    h = next;
  }
}

const async_copy_batch& kv_host_tier::queued_async_copies() const {
  return kv_.impl_->async;
}

void kv_host_tier::check_host_holders(std::vector<std::int32_t> held,
                                      const std::vector<std::int32_t>& swapped) const {
  const kv_manager::impl& m = *kv_.impl_;
  std::unordered_set<std::int32_t> entries;
  if (m.tier) {
    for (const cache::block_id b : m.tier->blocks()) entries.insert(b.value);
  }
  std::unordered_set<std::int32_t> swaps;
  for (const std::int32_t b : swapped) {
    if (entries.count(b) || !swaps.insert(b).second) {
      throw std::logic_error("scheduler: a swapped-out block is held twice");
    }
  }
  held.insert(held.end(), entries.begin(), entries.end());
  held.insert(held.end(), swapped.begin(), swapped.end());
  for (const auto* ops : {&m.disk_writes, &m.disk_reads}) {
    for (const auto& [hash, p] : *ops) held.push_back(p.host[0].value);
  }
  for (const cache::block_id b : m.copy_holds.ids()) held.push_back(b.value);
  for (const cache::block_id b : m.async.host.ids()) held.push_back(b.value);
  std::sort(held.begin(), held.end());
  held.erase(std::unique(held.begin(), held.end()), held.end());
  const std::size_t in_use = m.host ? m.host->num_total() - m.host->num_free() : 0;
  if (swapped.size() + entries.size() > held.size() || in_use != held.size()) {
    throw std::logic_error("scheduler: host blocks are lost or held twice");
  }
}

cache::block_refs kv_host_tier::pin_host(const std::vector<std::uint64_t>& hashes) {
  kv_manager::impl& d = *kv_.impl_;
  std::vector<cache::block_id> blocks;
  for (const std::uint64_t h : hashes) {
    const std::optional<cache::block_id> b = d.tier ? d.tier->block_of(h) : std::nullopt;
    if (!b) break;
    blocks.push_back(*b);
  }
  if (blocks.empty()) return {};
  return cache::block_refs::share(*d.host, blocks);
}

bool kv_disk_tier::on() const {
  return kv_.impl_->disk != nullptr;
}

bool kv_manager::caching() const {
  return impl_->prefix->is_active();
}

void kv_disk_tier::tier_continuation(const prefix_namespace& ns,
                                     const std::vector<msg::token_id>& tokens,
                                     std::int32_t matched_tokens, std::int32_t max_tokens,
                                     std::vector<std::uint64_t>& host,
                                     std::vector<std::uint64_t>& disk) {
  kv_manager::impl& d = *kv_.impl_;
  host.clear();
  disk.clear();
  if (!d.tier) return;
  const auto bs = static_cast<std::size_t>(kv_.block_size_);
  const std::uint64_t at_match =
      chain_at(cache::namespace_hash(d.ns_of(ns)), tokens, bs, matched_tokens);
  host = continuation(at_match, tokens, bs, matched_tokens, max_tokens,
                      [&](std::uint64_t parent, std::uint64_t h, const msg::token_id* t) {
                        return d.tier->contains(parent, h, t);
                      });
  if (!d.disk || d.disk->size() == 0) return;
  const auto from = matched_tokens + static_cast<std::int32_t>(host.size() * bs);
  disk = continuation(host.empty() ? at_match : host.back(), tokens, bs, from, max_tokens,
                      [&](std::uint64_t parent, std::uint64_t h, const msg::token_id* t) {
                        return d.disk->contains(parent, h, t) || d.disk_reads.count(h);
                      });
}

std::int32_t kv_disk_tier::start_disk_reads(const std::vector<std::uint64_t>& hashes) {
  kv_manager::impl& d = *kv_.impl_;
  std::int32_t started = 0;
  for (const std::uint64_t hash : hashes) {
    if (d.disk_reads.count(hash)) continue;  // in flight for another sequence
    if (d.host->num_free() == 0) d.tier->evict(1);
    auto block = cache::block_refs::allocate(*d.host, 1);
    if (!block) break;  // the rest would not continue a prefix: computed instead
    const cache::disk_prefix_tier::entry* e = d.disk->start_read(hash);
    if (!e) break;
    msg::disk_op op;
    op.write = false;
    op.host_block = (*block)[0].value;
    op.slot = e->slot;
    op.hash = hash;
    op.parent = e->parent;
    op.tokens = e->tokens;
    d.disk_reads.emplace(hash, kv_manager::impl::disk_pending{e->slot, std::move(*block)});
    d.disk_ops.push_back(std::move(op));
    ++started;
  }
  return started;
}

bool kv_disk_tier::disk_read_in_flight(std::uint64_t hash) const {
  return kv_.impl_->disk_reads.count(hash) > 0;
}

std::vector<msg::disk_op> kv_disk_tier::take_disk_ops() {
  kv_manager::impl& d = *kv_.impl_;
  std::vector<msg::disk_op> ops = std::exchange(d.disk_ops, {});
  if (!d.disk || d.disk_writes.size() >= d.max_disk_writes) return ops;
  for (auto& w : d.tier->take_writable(d.max_disk_writes - d.disk_writes.size())) {
    const std::optional<std::int64_t> slot = d.disk->reserve(w.hash, w.parent, w.tokens.data());
    if (!slot) continue;  // kept already, or every slot busy
    msg::disk_op op;
    op.write = true;
    op.host_block = w.block[0].value;
    op.slot = *slot;
    op.hash = w.hash;
    op.parent = w.parent;
    op.tokens = std::move(w.tokens);
    d.disk_writes.emplace(w.hash, kv_manager::impl::disk_pending{*slot, std::move(w.block)});
    ops.push_back(std::move(op));
  }
  return ops;
}

void kv_disk_tier::disk_answered(const msg::disk_op& op, bool ok) {
  kv_manager::impl& d = *kv_.impl_;
  auto& pending = op.write ? d.disk_writes : d.disk_reads;
  const auto it = pending.find(op.hash);
  if (it == pending.end() || it->second.slot != op.slot) {
    throw std::logic_error("kv_manager: an answer for a disk copy not in flight");
  }
  cache::block_refs host = std::move(it->second.host);
  pending.erase(it);
  if (op.write) {
    d.disk->written(op.hash, op.slot, ok);
    ++(ok ? d.disk_stats.written : d.disk_stats.write_failed);
    return;  // the host block goes back unless the host tier still keeps it
  }
  d.disk->read_done(op.hash, op.slot, ok);
  ++(ok ? d.disk_stats.read : d.disk_stats.read_failed);
  if (ok) d.tier->adopt(op.hash, op.parent, op.tokens, std::move(host));
}

const disk_counters& kv_disk_tier::stats() const {
  return kv_.impl_->disk_stats;
}

void kv_manager::count(msg::scheduler_stats& s) const {
  const kv_manager::impl& m = *impl_;
  s.num_free_blocks = static_cast<std::int32_t>(m.pool.num_free());
  s.num_cached_blocks = static_cast<std::int32_t>(m.prefix->stats().num_blocks);
  s.num_snapshots = snapshots_.num_snapshots();
  s.snapshot_capacity = snapshots_.snapshot_capacity();
  s.host_cache_spilled_blocks = m.spilled_blocks;
  s.host_cache_promoted_blocks = m.promoted_blocks;
  s.host_cache_written_blocks = m.written_through;
  s.num_host_cached_blocks = m.tier ? static_cast<std::int32_t>(m.tier->size()) : 0;
  s.disk_written_blocks = m.disk_stats.written;
  s.disk_write_failures = m.disk_stats.write_failed;
  s.disk_read_blocks = m.disk_stats.read;
  s.disk_read_failures = m.disk_stats.read_failed;
  s.disk_restored_blocks = m.disk_stats.restored;
  s.num_disk_cached_blocks = m.disk ? static_cast<std::int64_t>(m.disk->size()) : 0;
  s.disk_ops_in_flight = static_cast<std::int32_t>(m.disk_writes.size() + m.disk_reads.size());
}

}  // namespace courier::actors
