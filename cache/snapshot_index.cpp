#include "cache/snapshot_index.hpp"

#include <stdexcept>
#include <string>

namespace courier::cache {

snapshot_index::snapshot_index(block_pool& pool, std::int32_t first_slot, std::int32_t num_slots,
                               std::int32_t num_host_slots)
    : pool_(pool),
      first_slot_(first_slot),
      num_slots_(num_slots > 0 ? num_slots : 0),
      num_host_slots_(num_host_slots > 0 ? num_host_slots : 0) {
  for (std::int32_t i = num_slots_ - 1; i >= 0; --i) free_.push_back(first_slot_ + i);
  for (std::int32_t i = num_host_slots_ - 1; i >= 0; --i) host_free_.push_back(i);
}

snapshot_index::~snapshot_index() {
  for (const auto& [block, e] : entries_) pool_.dec_ref(block);
}

std::optional<std::int32_t> snapshot_index::take_slot() {
  if (free_.empty()) return std::nullopt;
  const std::int32_t slot = free_.back();
  free_.pop_back();
  return slot;
}

void snapshot_index::give_back(std::int32_t slot) {
  if (slot < first_slot_ || slot >= first_slot_ + num_slots_) {
    throw std::logic_error("snapshot_index: row " + std::to_string(slot) + " is not a snapshot row");
  }
  free_.push_back(slot);
}

bool snapshot_index::insert(block_id block, std::int32_t depth, std::int32_t slot,
                            snapshot_kind kind, std::uint64_t now, std::uint64_t hash) {
  if (entries_.count(block)) {
    give_back(slot);
    return false;
  }
  if (depth <= 0) throw std::logic_error("snapshot_index: a snapshot covers at least one block");
  pool_.inc_ref(block);  // throws on a free block: the prefix cache must store it
  snapshot_entry e;
  e.block = block;
  e.depth = depth;
  e.slot = slot;
  e.kind = kind;
  e.last_used = now;
  e.hash = hash;
  entries_.emplace(block, e);
  return true;
}

const snapshot_entry* snapshot_index::find(block_id block) const {
  auto it = entries_.find(block);
  return it == entries_.end() ? nullptr : &it->second;
}

std::int32_t snapshot_index::deepest(const std::vector<block_id>& path) const {
  if (entries_.empty()) return -1;
  for (std::size_t i = path.size(); i-- > 0;) {
    if (entries_.count(path[i])) return static_cast<std::int32_t>(i);
  }
  return -1;
}

snapshot_entry& snapshot_index::at(block_id block) {
  auto it = entries_.find(block);
  if (it == entries_.end()) {
    throw std::logic_error("snapshot_index: no snapshot at block " + std::to_string(block.value));
  }
  return it->second;
}

void snapshot_index::touch(block_id block, std::uint64_t now) { at(block).last_used = now; }

void snapshot_index::hit(block_id block, std::uint64_t now) {
  snapshot_entry& e = at(block);
  e.last_used = now;
  ++e.hits;
}

void snapshot_index::pin(block_id block) { ++at(block).pins; }

void snapshot_index::unpin(block_id block) {
  snapshot_entry& e = at(block);
  if (e.pins <= 0) throw std::logic_error("snapshot_index: unpin of an unpinned snapshot");
  --e.pins;
}

void snapshot_index::erase(block_id block) {
  snapshot_entry& e = at(block);
  if (e.pins > 0) throw std::logic_error("snapshot_index: erase of a snapshot being restored");
  if (e.slot >= 0) {
    free_.push_back(e.slot);
  } else {
    host_free_.push_back(e.host_slot);
  }
  entries_.erase(block);
  pool_.dec_ref(block);
}

std::optional<std::int32_t> snapshot_index::spill(block_id block) {
  snapshot_entry& e = at(block);
  if (e.pins > 0 || e.slot < 0) {
    throw std::logic_error("snapshot_index: spill of a pinned or spilled snapshot");
  }
  if (host_free_.empty()) return std::nullopt;
  e.host_slot = host_free_.back();
  host_free_.pop_back();
  free_.push_back(e.slot);
  e.slot = -1;
  return e.host_slot;
}

std::int32_t snapshot_index::promote(block_id block, std::int32_t slot) {
  snapshot_entry& e = at(block);
  if (e.slot >= 0) throw std::logic_error("snapshot_index: promote of a snapshot on the device");
  if (slot < first_slot_ || slot >= first_slot_ + num_slots_) {
    throw std::logic_error("snapshot_index: promote into a row that is not a snapshot row");
  }
  const std::int32_t host = e.host_slot;
  e.slot = slot;
  e.host_slot = -1;
  host_free_.push_back(host);
  return host;
}

std::optional<std::int32_t> snapshot_index::take_host() {
  if (host_free_.empty()) return std::nullopt;
  const std::int32_t h = host_free_.back();
  host_free_.pop_back();
  ++host_lent_;
  return h;
}

void snapshot_index::give_back_host(std::int32_t host_row) {
  if (host_row < 0 || host_row >= num_host_slots_ || host_lent_ <= 0) {
    throw std::logic_error("snapshot_index: host row " + std::to_string(host_row) +
                           " was not lent");
  }
  --host_lent_;
  host_free_.push_back(host_row);
}

std::optional<std::pair<std::int32_t, std::int32_t>> snapshot_index::detach(block_id block) {
  snapshot_entry& e = at(block);
  if (e.pins > 0 || e.hash == 0 || e.slot < 0) {
    throw std::logic_error(
        "snapshot_index: detach of a pinned or spilled snapshot, or one without a hash");
  }
  if (host_free_.empty()) return std::nullopt;
  const std::int32_t row = e.slot;
  const std::int32_t host = host_free_.back();
  host_free_.pop_back();
  free_.push_back(row);
  snapshot_entry d = e;
  d.block = block_id{};
  d.slot = -1;
  d.host_slot = host;
  d.ready = false;
  entries_.erase(block);
  pool_.dec_ref(block);
  if (detached_.count(d.hash)) erase_detached(d.hash);
  detached_.emplace(d.hash, d);
  return std::make_pair(row, host);
}

const snapshot_entry* snapshot_index::find_detached(std::uint64_t hash) const {
  auto it = detached_.find(hash);
  return it == detached_.end() ? nullptr : &it->second;
}

void snapshot_index::erase_detached(std::uint64_t hash) {
  auto it = detached_.find(hash);
  if (it == detached_.end()) throw std::logic_error("snapshot_index: no detached snapshot");
  if (it->second.pins > 0) throw std::logic_error("snapshot_index: erase of a pinned snapshot");
  host_free_.push_back(it->second.host_slot);
  detached_.erase(it);
}

void snapshot_index::set_ready(std::uint64_t hash, std::int32_t host_row, bool ok) {
  auto it = detached_.find(hash);
  if (it == detached_.end() || it->second.host_slot != host_row) return;
  if (ok) {
    it->second.ready = true;
  } else if (it->second.pins == 0) {
    erase_detached(hash);
  }
}

void snapshot_index::pin_detached(std::uint64_t hash) { ++detached_.at(hash).pins; }

void snapshot_index::unpin_detached(std::uint64_t hash) {
  snapshot_entry& e = detached_.at(hash);
  if (e.pins <= 0) throw std::logic_error("snapshot_index: unpin of an unpinned snapshot");
  --e.pins;
}

void snapshot_index::hit_detached(std::uint64_t hash, std::uint64_t now) {
  snapshot_entry& e = detached_.at(hash);
  e.last_used = now;
  ++e.hits;
}

std::vector<const snapshot_entry*> snapshot_index::detached() const {
  std::vector<const snapshot_entry*> out;
  out.reserve(detached_.size());
  for (const auto& [hash, e] : detached_) out.push_back(&e);
  return out;
}

std::vector<const snapshot_entry*> snapshot_index::entries() const {
  std::vector<const snapshot_entry*> out;
  out.reserve(entries_.size());
  for (const auto& [block, e] : entries_) out.push_back(&e);
  return out;
}

void snapshot_index::check_invariants() const {
  std::vector<char> seen(static_cast<std::size_t>(num_slots_), 0);
  auto mark = [&](std::int32_t slot, const char* who) {
    const std::int32_t i = slot - first_slot_;
    if (i < 0 || i >= num_slots_) {
      throw std::logic_error(std::string("snapshot_index: ") + who + " holds a foreign row");
    }
    if (seen[static_cast<std::size_t>(i)]++) {
      throw std::logic_error(std::string("snapshot_index: a row is held twice (") + who + ")");
    }
  };
  for (const std::int32_t slot : free_) mark(slot, "the free list");
  std::vector<char> host_seen(static_cast<std::size_t>(num_host_slots_), 0);
  auto mark_host = [&](std::int32_t h) {
    if (h < 0 || h >= num_host_slots_ || host_seen[static_cast<std::size_t>(h)]++) {
      throw std::logic_error("snapshot_index: a host row is foreign or held twice");
    }
  };
  for (const std::int32_t h : host_free_) mark_host(h);
  for (const auto& [block, e] : entries_) {
    if ((e.slot >= 0) == (e.host_slot >= 0)) {
      throw std::logic_error("snapshot_index: an entry in both tiers or in none");
    }
    if (e.slot < 0) {
      mark_host(e.host_slot);
      if (pool_.ref_count(block) < 1) throw std::logic_error("snapshot_index: entry on a free block");
      continue;
    }
    mark(e.slot, "an entry");
    if (e.block != block) throw std::logic_error("snapshot_index: an entry under another block");
    if (e.pins < 0) throw std::logic_error("snapshot_index: negative pins");
    if (e.depth <= 0) throw std::logic_error("snapshot_index: an empty snapshot");
    if (pool_.ref_count(block) < 1) throw std::logic_error("snapshot_index: entry on a free block");
  }
  for (const auto& [hash, e] : detached_) {
    mark_host(e.host_slot);
    if (e.hash != hash || e.slot >= 0 || e.block.value >= 0 || e.pins < 0 || e.depth <= 0) {
      throw std::logic_error("snapshot_index: a detached entry is malformed");
    }
  }
  // Rows neither free nor in an entry are held by takers (snapshots being taken); host rows
  // neither free nor in an entry are lent.
  std::int32_t unseen = 0;
  for (const char seen_host : host_seen) unseen += seen_host ? 0 : 1;
  if (unseen != host_lent_) {
    throw std::logic_error("snapshot_index: " + std::to_string(unseen) +
                           " host rows are neither free nor kept, " +
                           std::to_string(host_lent_) + " are lent");
  }
}

}  // namespace courier::cache
