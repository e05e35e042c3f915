#include "cluster/router_core.hpp"

#include <stdexcept>

#include "cache/block_hash.hpp"

namespace courier::cluster {

namespace {

std::uint8_t medium_bit(cache::cache_medium m) {
  return static_cast<std::uint8_t>(1u << static_cast<unsigned>(m));
}

}  // namespace

void replica_index::apply(const cache::cache_event& e) {
  switch (e.what) {
    case cache::cache_event::kind::stored:
      for (std::uint64_t h : e.hashes) blocks_[h] |= medium_bit(e.medium);
      return;
    case cache::cache_event::kind::removed:
      for (std::uint64_t h : e.hashes) {
        const auto it = blocks_.find(h);
        if (it == blocks_.end()) continue;
        it->second &= static_cast<std::uint8_t>(~medium_bit(e.medium));
        if (it->second == 0) blocks_.erase(it);
      }
      return;
    case cache::cache_event::kind::cleared:
      blocks_.clear();
      return;
  }
}

void replica_index::add_pending(const std::vector<std::uint64_t>& hashes) {
  pending_.insert(hashes.begin(), hashes.end());
}

void replica_index::drop_pending(const std::vector<std::uint64_t>& hashes) {
  for (std::uint64_t h : hashes) {
    auto it = pending_.find(h);
    if (it != pending_.end()) pending_.erase(it);
  }
}

std::size_t replica_index::matched_blocks(const std::vector<std::uint64_t>& hashes) const {
  std::size_t n = 0;
  while (n < hashes.size() &&
         (blocks_.count(hashes[n]) != 0 || pending_.count(hashes[n]) != 0)) {
    ++n;
  }
  return n;
}

std::vector<std::uint64_t> prompt_hashes(const cache::cache_namespace& ns,
                                         const std::vector<cache::token_id>& prompt,
                                         std::size_t block_size) {
  std::vector<std::uint64_t> out;
  std::uint64_t h = cache::namespace_hash(ns);
  for (std::size_t b = 0; (b + 1) * block_size <= prompt.size(); ++b) {
    h = cache::chain_hash(h, prompt.data() + b * block_size, block_size);
    out.push_back(h);
  }
  return out;
}

router_core::router_core(std::size_t num_replicas, routing_options options)
    : options_(options), replicas_(num_replicas) {
  if (num_replicas == 0) throw std::invalid_argument("router: no replicas");
  if (options_.block_size == 0) throw std::invalid_argument("router: block size 0");
}

void router_core::on_events(std::size_t r, const cache::cache_event_log& events) {
  replica& x = replicas_.at(r);
  for (const cache::cache_event& e : events) x.index.apply(e);
}

void router_core::set_up(std::size_t r, bool up) {
  replica& x = replicas_.at(r);
  if (x.up == up) return;
  x.up = up;
  x.index = replica_index{};  // down: what it held is unknown; back: it says again
  x.in_flight = 0;            // its requests failed or were retried elsewhere
}

std::optional<std::size_t> router_core::least_loaded() const {
  std::optional<std::size_t> best;
  for (std::size_t r = 0; r < replicas_.size(); ++r) {
    const replica& x = replicas_[r];
    if (!x.up) continue;
    if (!best) {
      best = r;
      continue;
    }
    const replica& b = replicas_[*best];
    if (x.in_flight < b.in_flight ||
        (x.in_flight == b.in_flight && x.index.size() < b.index.size())) {
      best = r;
    }
  }
  return best;
}

bool router_core::balanced() const {
  std::int64_t lo = -1, hi = -1;
  for (const replica& x : replicas_) {
    if (!x.up) continue;
    lo = lo < 0 ? x.in_flight : std::min(lo, x.in_flight);
    hi = std::max(hi, x.in_flight);
  }
  return hi - lo <= options_.balance_abs ||
         static_cast<double>(hi) <= static_cast<double>(lo) * options_.balance_rel;
}

std::optional<std::size_t> router_core::choose(const cache::cache_namespace& ns,
                                               const std::vector<cache::token_id>& prompt,
                                               std::size_t* matched,
                                               std::vector<std::uint64_t>* hashes_out) {
  std::optional<std::size_t> pick;
  std::size_t best_match = 0;
  std::vector<std::uint64_t> hashes;
  switch (options_.policy) {
    case routing_policy::round_robin:
      for (std::size_t i = 0; i < replicas_.size() && !pick; ++i) {
        const std::size_t r = (next_ + i) % replicas_.size();
        if (replicas_[r].up) pick = r;
      }
      if (pick) next_ = *pick + 1;
      break;
    case routing_policy::least_loaded:
      pick = least_loaded();
      break;
    case routing_policy::cache_aware: {
      hashes = prompt_hashes(ns, prompt, options_.block_size);
      if (balanced() && !hashes.empty()) {
        for (std::size_t r = 0; r < replicas_.size(); ++r) {
          if (!replicas_[r].up) continue;
          const std::size_t m = replicas_[r].index.matched_blocks(hashes);
          if (m > best_match) best_match = m, pick = r;
        }
        if (pick && static_cast<double>(best_match) <
                        options_.cache_threshold * static_cast<double>(hashes.size())) {
          pick.reset();
        }
      }
      if (!pick) pick = least_loaded();
      break;
    }
  }
  if (!pick) return std::nullopt;
  replica& x = replicas_[*pick];
  ++x.in_flight;
  if (hashes.empty()) hashes = prompt_hashes(ns, prompt, options_.block_size);
  if (matched) *matched = x.index.matched_blocks(hashes);
  x.index.add_pending(hashes);
  if (hashes_out) *hashes_out = std::move(hashes);
  return pick;
}

std::vector<std::uint64_t> router_core::start_on(std::size_t r, const cache::cache_namespace& ns,
                                                 const std::vector<cache::token_id>& prompt) {
  replica& x = replicas_.at(r);
  ++x.in_flight;
  std::vector<std::uint64_t> hashes = prompt_hashes(ns, prompt, options_.block_size);
  x.index.add_pending(hashes);
  return hashes;
}

void router_core::finished(std::size_t r, const std::vector<std::uint64_t>& hashes) {
  replica& x = replicas_.at(r);
  if (x.in_flight > 0) --x.in_flight;
  x.index.drop_pending(hashes);
}

}  // namespace courier::cluster
