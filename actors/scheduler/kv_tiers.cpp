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

std::int32_t kv_manager::num_host_blocks() const {
  return impl_->host ? static_cast<std::int32_t>(impl_->host->num_total()) : 0;
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
    impl_->queue_copy(true, table[k].value, (*to)[k].value);
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
    impl_->queue_copy_async(false, (*fresh)[i].value, host[i].value);
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

host_resume kv_manager::find_host_resume(const prefix_namespace& ns,
                                         const std::vector<msg::token_id>& tokens,
                                         const resume_point& at, std::int32_t max_tokens,
                                         std::uint64_t now) {
  host_resume best;
  if (!impl_->detaching() || impl_->snaps->num_detached() == 0) return best;
  const auto bs = static_cast<std::size_t>(block_size_);
  std::uint64_t h = cache::namespace_hash(impl_->ns_of(ns));
  std::vector<std::uint64_t> host;  // blocks past the device's stored prefix, in the host tier
  for (std::size_t at_tok = 0; at_tok + bs <= static_cast<std::size_t>(std::max(0, max_tokens));
       at_tok += bs) {
    const msg::token_id* t = &tokens[at_tok];
    const std::uint64_t next = cache::chain_hash(h, t, bs);
    if (at_tok >= static_cast<std::size_t>(at.stored_tokens)) {
      if (!impl_->tier->contains(h, next, t)) break;
      host.push_back(next);
    }
    h = next;
    const auto depth = static_cast<std::int32_t>(at_tok + bs);
    const cache::snapshot_entry* e = impl_->snaps->find_detached(next);
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
  const cache::snapshot_entry* e = impl_->snaps->find_detached(best.hash);
  if (e->hits == 0) impl_->policy.reused(e->kind);
  impl_->snaps->hit_detached(best.hash, now);
  impl_->snaps->pin_detached(best.hash);
  return best;
}

void kv_manager::unpin_detached(std::uint64_t hash) { impl_->snaps->unpin_detached(hash); }

std::int32_t kv_manager::deepest_detached(const std::vector<std::uint64_t>& hashes) const {
  if (!impl_->snaps) return -1;
  for (std::size_t i = hashes.size(); i-- > 0;) {
    if (impl_->snaps->find_detached(hashes[i])) return static_cast<std::int32_t>(i);
  }
  return -1;
}

std::vector<spilled_block> kv_manager::take_detached() {
  return std::exchange(impl_->detached, {});
}

void kv_manager::detached_answered(const std::vector<spilled_block>& detached, bool ok) {
  if (!impl_->snaps) return;
  for (const spilled_block& d : detached) impl_->snaps->set_ready(d.hash, d.host_block, ok);
}

std::int32_t kv_manager::num_detached_snapshots() const {
  return impl_->snaps ? static_cast<std::int32_t>(impl_->snaps->num_detached()) : 0;
}

std::int32_t kv_manager::promote(const std::vector<std::uint64_t>& hashes,
                                 const cache::block_refs& fresh) {
  std::size_t i = 0;
  for (; i < hashes.size() && i < fresh.size(); ++i) {
    bool from_disk = false;
    const cache::block_refs from = impl_->tier->share(hashes[i], &from_disk);
    if (from.empty()) break;  // evicted meanwhile (making room for fresh)
    if (from_disk) ++impl_->disk_stats.promoted;
    impl_->queue_copy_async(false, fresh[i].value, from[0].value);
    ++impl_->promoted_blocks;
  }  // the entries stay in the tier, their blocks held by the batch until they are copied
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


std::vector<msg::block_copy> kv_manager::take_block_copies() {
  return std::exchange(impl_->block_copies, {});
}

cache::block_refs kv_manager::take_copy_holds() {
  return std::move(impl_->copy_holds);
}

async_copy_batch kv_manager::take_async_copies() {
  for (const spilled_block& w : impl_->async.written) {
    impl_->tier->set_in_flight(w.hash, cache::block_id{w.host_block}, true);
  }
  return std::exchange(impl_->async, {});
}

void kv_manager::write_through(const prefix_namespace& ns, const std::vector<msg::token_id>& tokens,
                               const cache::block_refs& table, std::int32_t from_block,
                               std::int32_t to_block) {
  if (!impl_->tier || from_block >= to_block) return;
  const auto bs = static_cast<std::size_t>(block_size_);
  // A tier under twice the device's blocks takes blocks in only into free host blocks: evicting
  // an entry for a block the device still holds would trade a likely hit for a copy of what the
  // device has (that block is copied out when evicted instead). A larger one is mostly what the
  // device evicted either way, and makes room as a spill would (SGLang HiCache's host-to-device
  // ratio is 2 by default for the same reason).
  const bool free_only = impl_->host->num_total() < 2 * impl_->pool.num_total();
  std::uint64_t h =
      chain_at(cache::namespace_hash(impl_->ns_of(ns)), tokens, bs, from_block * block_size_);
  for (auto i = static_cast<std::size_t>(from_block); i < static_cast<std::size_t>(to_block); ++i) {
    if (free_only && impl_->host->num_free() == 0) break;
    const msg::token_id* t = &tokens[i * bs];
    const std::uint64_t next = cache::chain_hash(h, t, bs);
    if (const auto to = impl_->tier->put(next, h, t)) {
      impl_->queue_copy_async(true, table[i].value, to->value);
      impl_->async.written.push_back({next, to->value});
      ++impl_->spilled_blocks;
      ++impl_->written_through;
      if (impl_->disk && impl_->disk->has(next)) impl_->tier->set_on_disk(next);
    }
    h = next;
  }
}

const async_copy_batch& kv_manager::queued_async_copies() const {
  return impl_->async;
}

void kv_manager::check_host_holders(std::vector<std::int32_t> held,
                                    const std::vector<std::int32_t>& swapped) const {
  const impl& m = *impl_;
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

cache::block_refs kv_manager::pin_host(const std::vector<std::uint64_t>& hashes) {
  std::vector<cache::block_id> blocks;
  for (const std::uint64_t h : hashes) {
    const std::optional<cache::block_id> b = impl_->tier ? impl_->tier->block_of(h) : std::nullopt;
    if (!b) break;
    blocks.push_back(*b);
  }
  if (blocks.empty()) return {};
  return cache::block_refs::share(*impl_->host, blocks);
}

bool kv_manager::has_disk() const {
  return impl_->disk != nullptr;
}

bool kv_manager::caching() const {
  return impl_->prefix->is_active();
}

void kv_manager::tier_continuation(const prefix_namespace& ns,
                                   const std::vector<msg::token_id>& tokens,
                                   std::int32_t matched_tokens, std::int32_t max_tokens,
                                   std::vector<std::uint64_t>& host,
                                   std::vector<std::uint64_t>& disk) {
  host.clear();
  disk.clear();
  if (!impl_->tier) return;
  const auto bs = static_cast<std::size_t>(block_size_);
  const std::uint64_t at_match =
      chain_at(cache::namespace_hash(impl_->ns_of(ns)), tokens, bs, matched_tokens);
  host = continuation(at_match, tokens, bs, matched_tokens, max_tokens,
                      [&](std::uint64_t parent, std::uint64_t h, const msg::token_id* t) {
                        return impl_->tier->contains(parent, h, t);
                      });
  if (!impl_->disk || impl_->disk->size() == 0) return;
  const auto from = matched_tokens + static_cast<std::int32_t>(host.size() * bs);
  disk = continuation(host.empty() ? at_match : host.back(), tokens, bs, from, max_tokens,
                      [&](std::uint64_t parent, std::uint64_t h, const msg::token_id* t) {
                        return impl_->disk->contains(parent, h, t) || impl_->disk_reads.count(h);
                      });
}

std::int32_t kv_manager::start_disk_reads(const std::vector<std::uint64_t>& hashes) {
  std::int32_t started = 0;
  for (const std::uint64_t hash : hashes) {
    if (impl_->disk_reads.count(hash)) continue;  // in flight for another sequence
    if (impl_->host->num_free() == 0) impl_->tier->evict(1);
    auto block = cache::block_refs::allocate(*impl_->host, 1);
    if (!block) break;  // the rest would not continue a prefix: computed instead
    const cache::disk_prefix_tier::entry* e = impl_->disk->start_read(hash);
    if (!e) break;
    msg::disk_op op;
    op.write = false;
    op.host_block = (*block)[0].value;
    op.slot = e->slot;
    op.hash = hash;
    op.parent = e->parent;
    op.tokens = e->tokens;
    impl_->disk_reads.emplace(hash, impl::disk_pending{e->slot, std::move(*block)});
    impl_->disk_ops.push_back(std::move(op));
    ++started;
  }
  return started;
}

bool kv_manager::disk_read_in_flight(std::uint64_t hash) const {
  return impl_->disk_reads.count(hash) > 0;
}

std::vector<msg::disk_op> kv_manager::take_disk_ops() {
  std::vector<msg::disk_op> ops = std::exchange(impl_->disk_ops, {});
  if (!impl_->disk || impl_->disk_writes.size() >= impl_->max_disk_writes) return ops;
  for (auto& w : impl_->tier->take_writable(impl_->max_disk_writes - impl_->disk_writes.size())) {
    const std::optional<std::int64_t> slot =
        impl_->disk->reserve(w.hash, w.parent, w.tokens.data());
    if (!slot) continue;  // kept already, or every slot busy
    msg::disk_op op;
    op.write = true;
    op.host_block = w.block[0].value;
    op.slot = *slot;
    op.hash = w.hash;
    op.parent = w.parent;
    op.tokens = std::move(w.tokens);
    impl_->disk_writes.emplace(w.hash, impl::disk_pending{*slot, std::move(w.block)});
    ops.push_back(std::move(op));
  }
  return ops;
}

void kv_manager::disk_answered(const msg::disk_op& op, bool ok) {
  auto& pending = op.write ? impl_->disk_writes : impl_->disk_reads;
  const auto it = pending.find(op.hash);
  if (it == pending.end() || it->second.slot != op.slot) {
    throw std::logic_error("kv_manager: an answer for a disk copy not in flight");
  }
  cache::block_refs host = std::move(it->second.host);
  pending.erase(it);
  if (op.write) {
    impl_->disk->written(op.hash, op.slot, ok);
    ++(ok ? impl_->disk_stats.written : impl_->disk_stats.write_failed);
    return;  // the host block goes back unless the host tier still keeps it
  }
  impl_->disk->read_done(op.hash, op.slot, ok);
  ++(ok ? impl_->disk_stats.read : impl_->disk_stats.read_failed);
  if (ok) impl_->tier->adopt(op.hash, op.parent, op.tokens, std::move(host));
}

const disk_counters& kv_manager::disk_stats() const {
  return impl_->disk_stats;
}

void kv_manager::count(msg::scheduler_stats& s) const {
  const impl& m = *impl_;
  s.num_free_blocks = static_cast<std::int32_t>(m.pool.num_free());
  s.num_cached_blocks = static_cast<std::int32_t>(m.prefix->stats().num_blocks);
  s.num_snapshots = num_snapshots();
  s.snapshot_capacity = snapshot_capacity();
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
