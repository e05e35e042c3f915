#include "cache/host_prefix_tier.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace courier::cache {

host_prefix_tier::host_prefix_tier(block_pool& host_pool, std::size_t block_size,
                                   bool with_disk)
    : pool_(host_pool), block_size_(block_size), disk_(with_disk) {}

std::optional<block_id> host_prefix_tier::put(std::uint64_t hash, std::uint64_t parent_hash,
                                              const token_id* tokens) {
  if (entries_.count(hash)) return std::nullopt;
  if (pool_.num_free() == 0) evict(1);
  auto block = block_refs::allocate(pool_, 1);
  if (!block) return std::nullopt;
  const block_id id = (*block)[0];
  entry e;
  e.block = std::move(*block);
  e.parent = parent_hash;
  e.tokens.assign(tokens, tokens + block_size_);
  lru_.touch(e.last_used, hash);
  entries_.emplace(hash, std::move(e));
  return id;
}

bool host_prefix_tier::contains(std::uint64_t parent_hash, std::uint64_t hash,
                                const token_id* tokens) {
  const auto it = entries_.find(hash);
  if (it == entries_.end() || it->second.in_flight || it->second.parent != parent_hash ||
      !std::equal(it->second.tokens.begin(), it->second.tokens.end(), tokens)) {
    return false;
  }
  lru_.touch(it->second.last_used, hash);
  return true;
}

block_refs host_prefix_tier::share(std::uint64_t hash, bool* from_disk) {
  const auto it = entries_.find(hash);
  if (it == entries_.end()) return {};
  entry& e = it->second;
  *from_disk = std::exchange(e.from_disk, false);
  lru_.touch(e.last_used, hash);
  return block_refs::share(pool_, {e.block[0]});
}

void host_prefix_tier::forget(std::uint64_t hash, block_id block) {
  const auto it = entries_.find(hash);
  if (it != entries_.end() && it->second.block[0] == block) drop(it);
}

void host_prefix_tier::set_in_flight(std::uint64_t hash, block_id block, bool in_flight) {
  const auto it = entries_.find(hash);
  if (it == entries_.end() || it->second.block[0] != block) return;
  it->second.in_flight = in_flight;
  if (in_flight || it->second.copied) return;
  it->second.copied = true;
  append_tier_event(events_, cache_event::kind::stored, cache_medium::cpu, hash,
                    static_cast<std::uint32_t>(block_size_));
  if (disk_ && !it->second.on_disk) writable_.emplace_back(hash, block);
}

bool host_prefix_tier::adopt(std::uint64_t hash, std::uint64_t parent_hash,
                             const std::vector<token_id>& tokens, block_refs block) {
  if (entries_.count(hash) || block.size() != 1 || tokens.size() != block_size_) return false;
  entry e;
  e.block = std::move(block);
  e.parent = parent_hash;
  e.tokens = tokens;
  e.copied = e.on_disk = e.from_disk = true;
  lru_.touch(e.last_used, hash);
  entries_.emplace(hash, std::move(e));
  append_tier_event(events_, cache_event::kind::stored, cache_medium::cpu, hash,
                    static_cast<std::uint32_t>(block_size_));
  return true;
}

void host_prefix_tier::set_on_disk(std::uint64_t hash) {
  const auto it = entries_.find(hash);
  if (it != entries_.end()) it->second.on_disk = true;
}

std::vector<host_prefix_tier::writable> host_prefix_tier::take_writable(std::size_t n) {
  std::vector<writable> out;
  while (out.size() < n && !writable_.empty()) {
    const auto [hash, block] = writable_.front();
    writable_.pop_front();
    const auto it = entries_.find(hash);
    if (it == entries_.end() || it->second.block[0] != block || it->second.on_disk) continue;
    it->second.on_disk = true;
    writable w;
    w.hash = hash;
    w.parent = it->second.parent;
    w.tokens = it->second.tokens;
    w.block = block_refs::share(pool_, {block});
    out.push_back(std::move(w));
  }
  return out;
}

std::optional<block_id> host_prefix_tier::block_of(std::uint64_t hash) const {
  const auto it = entries_.find(hash);
  if (it == entries_.end() || !it->second.copied) return std::nullopt;
  return it->second.block[0];
}

bool host_prefix_tier::from_disk(std::uint64_t hash) const {
  const auto it = entries_.find(hash);
  return it != entries_.end() && it->second.from_disk;
}

std::vector<block_id> host_prefix_tier::blocks() const {
  std::vector<block_id> out;
  for (const auto& [hash, e] : entries_) out.push_back(e.block[0]);
  return out;
}

std::size_t host_prefix_tier::evict(std::size_t n) {
  std::size_t freed = 0;
  // Entries the disk tier keeps go first (dropping them loses nothing), then the rest, each
  // pass least recently used first.
  for (const bool disk_pass : {true, false}) {
    if (disk_pass && !disk_) continue;
    for (auto it = lru_.begin(); it != lru_.end() && freed < n;) {
      const auto e = entries_.find(it->second);
      ++it;
      if (pool_.ref_count(e->second.block[0]) != 1) continue;
      if (disk_pass && !e->second.on_disk) continue;
      drop(e);
      ++freed;
    }
  }
  return freed;
}

void host_prefix_tier::drop(std::unordered_map<std::uint64_t, entry>::iterator it) {
  if (it->second.copied) {
    append_tier_event(events_, cache_event::kind::removed, cache_medium::cpu, it->first, 0);
  }
  lru_.erase(it->second.last_used);
  entries_.erase(it);  // its block_refs drops the reference
}

void host_prefix_tier::snapshot_events(cache_event_log& log) const {
  for (const auto& [last_used, hash] : lru_) {
    if (entries_.at(hash).copied) {
      append_tier_event(&log, cache_event::kind::stored, cache_medium::cpu, hash,
                        static_cast<std::uint32_t>(block_size_));
    }
  }
}

void host_prefix_tier::check_invariants() const {
  if (lru_.size() != entries_.size()) {
    throw std::logic_error("host_prefix_tier: the LRU order and the entries disagree");
  }
  for (const auto& [hash, e] : entries_) {
    if (!lru_.lists(e.last_used, hash) || e.block.size() != 1 ||
        e.tokens.size() != block_size_ || pool_.ref_count(e.block[0]) < 1) {
      throw std::logic_error(
          "host_prefix_tier: an entry is not in the LRU order or holds no block");
    }
  }
}

}  // namespace courier::cache
