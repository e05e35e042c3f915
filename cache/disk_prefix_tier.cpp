#include "cache/disk_prefix_tier.hpp"

#include <algorithm>
#include <stdexcept>

namespace courier::cache {

disk_prefix_tier::disk_prefix_tier(std::int64_t num_slots, std::size_t block_size)
    : num_slots_(num_slots), block_size_(block_size) {
  for (std::int64_t s = num_slots - 1; s >= 0; --s) free_.push_back(s);
}

bool disk_prefix_tier::evict_one() {
  for (auto it = lru_.begin(); it != lru_.end(); ++it) {
    const auto e = entries_.find(it->second);
    if (e->second.writing || e->second.readers > 0) continue;
    drop(e);
    return true;
  }
  return false;
}

std::optional<std::int64_t> disk_prefix_tier::reserve(std::uint64_t hash, std::uint64_t parent,
                                                      const token_id* tokens) {
  if (entries_.count(hash)) return std::nullopt;
  if (free_.empty() && !evict_one()) return std::nullopt;
  entry e;
  e.slot = free_.back();
  free_.pop_back();
  e.parent = parent;
  e.tokens.assign(tokens, tokens + block_size_);
  e.writing = true;
  lru_.touch(e.last_used, hash);
  const std::int64_t slot = e.slot;
  entries_.emplace(hash, std::move(e));
  return slot;
}

void disk_prefix_tier::written(std::uint64_t hash, std::int64_t slot, bool ok) {
  const auto it = entries_.find(hash);
  if (it == entries_.end() || it->second.slot != slot || !it->second.writing) {
    throw std::logic_error("disk_prefix_tier: written() for a write not in flight");
  }
  if (!ok) {
    drop(it);  // still `writing`: never announced
    return;
  }
  it->second.writing = false;
  append_tier_event(events_, cache_event::kind::stored, cache_medium::disk, hash,
                    static_cast<std::uint32_t>(block_size_));
}

bool disk_prefix_tier::restore(std::int64_t slot, std::uint64_t hash, std::uint64_t parent,
                               const std::vector<token_id>& tokens) {
  const auto f = std::find(free_.begin(), free_.end(), slot);
  if (f == free_.end() || entries_.count(hash) || tokens.size() != block_size_) return false;
  free_.erase(f);
  entry e;
  e.slot = slot;
  e.parent = parent;
  e.tokens = tokens;
  lru_.touch(e.last_used, hash);
  entries_.emplace(hash, std::move(e));
  append_tier_event(events_, cache_event::kind::stored, cache_medium::disk, hash,
                    static_cast<std::uint32_t>(block_size_));
  return true;
}

bool disk_prefix_tier::contains(std::uint64_t parent_hash, std::uint64_t hash,
                                const token_id* tokens) {
  const auto it = entries_.find(hash);
  if (it == entries_.end() || it->second.writing || it->second.failed ||
      it->second.parent != parent_hash ||
      !std::equal(it->second.tokens.begin(), it->second.tokens.end(), tokens)) {
    return false;
  }
  lru_.touch(it->second.last_used, hash);
  return true;
}

const disk_prefix_tier::entry* disk_prefix_tier::start_read(std::uint64_t hash) {
  const auto it = entries_.find(hash);
  if (it == entries_.end() || it->second.writing || it->second.failed) return nullptr;
  ++it->second.readers;
  return &it->second;
}

void disk_prefix_tier::read_done(std::uint64_t hash, std::int64_t slot, bool ok) {
  const auto it = entries_.find(hash);
  if (it == entries_.end() || it->second.slot != slot || it->second.readers == 0) {
    throw std::logic_error("disk_prefix_tier: read_done() for a read not in flight");
  }
  --it->second.readers;
  it->second.failed |= !ok;
  if (it->second.failed && it->second.readers == 0) drop(it);
}

void disk_prefix_tier::drop(std::unordered_map<std::uint64_t, entry>::iterator it) {
  if (it->second.readers > 0) {
    throw std::logic_error("disk_prefix_tier: dropping an entry being read");
  }
  if (!it->second.writing) {
    append_tier_event(events_, cache_event::kind::removed, cache_medium::disk, it->first, 0);
  }
  free_.push_back(it->second.slot);
  lru_.erase(it->second.last_used);
  entries_.erase(it);
}

void disk_prefix_tier::snapshot_events(cache_event_log& log) const {
  for (const auto& [last_used, hash] : lru_) {
    if (!entries_.at(hash).writing) {
      append_tier_event(&log, cache_event::kind::stored, cache_medium::disk, hash,
                        static_cast<std::uint32_t>(block_size_));
    }
  }
}

void disk_prefix_tier::check_invariants() const {
  if (lru_.size() != entries_.size() ||
      free_.size() + entries_.size() != static_cast<std::size_t>(num_slots_)) {
    throw std::logic_error("disk_prefix_tier: slots lost or held twice");
  }
  std::vector<char> seen(static_cast<std::size_t>(num_slots_), 0);
  auto see = [&](std::int64_t s) {
    if (s < 0 || s >= num_slots_ || seen[static_cast<std::size_t>(s)]++) {
      throw std::logic_error("disk_prefix_tier: a slot is out of range or held twice");
    }
  };
  for (const std::int64_t s : free_) see(s);
  for (const auto& [hash, e] : entries_) {
    see(e.slot);
    if (!lru_.lists(e.last_used, hash) || e.tokens.size() != block_size_ || e.readers < 0) {
      throw std::logic_error("disk_prefix_tier: an entry is not in the LRU order");
    }
  }
}

}  // namespace courier::cache
