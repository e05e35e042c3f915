#pragma once
// Which replica a request goes to (cluster.routing), as SGLang's cache-aware router decides it:
// per replica, an index of the blocks its prefix cache holds, kept from the replica's own cache
// events (cache/cache_events.hpp: exact up to the events' lag), and the requests routed to it
// and not yet ended (its load).
// - cache_aware: when the loads are balanced (the most loaded replica's load is within
//   balance_abs of the least loaded's, or within balance_rel times it), the replica whose cache
//   holds the longest prefix of the prompt, if that prefix is at least cache_threshold of the
//   prompt's blocks; otherwise (imbalanced, or no replica holds enough) the least loaded
//   (ties: the one caching fewest blocks, which has the most room; then the lowest index).
// - least_loaded: the least loaded (ties as above).
// - round_robin: the next replica that is up.
// A replica that is down is never chosen; choose() answers nothing when none is up. Prompts are
// hashed in their namespace (adapter, tenant under cache isolation), as the replicas' caches
// hash them, so a tenant's prompt never matches another tenant's blocks.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cache/cache_events.hpp"
#include "cache/cache_namespace.hpp"
#include "cache/types.hpp"

namespace courier::cluster {

enum class routing_policy : std::uint8_t { cache_aware, least_loaded, round_robin };

struct routing_options {
  routing_policy policy = routing_policy::cache_aware;
  std::size_t block_size = 16;   // the replicas' (scheduler.block_size)
  double cache_threshold = 0.5;  // share of a prompt's blocks a replica must hold to win on it
  std::int64_t balance_abs = 32;  // SGLang's balance_abs_threshold
  double balance_rel = 1.5;       // SGLang's balance_rel_threshold
};

// What one replica's prefix cache holds, from its events applied in order (a block counts while
// any medium keeps it: the device, or the KV host or disk tier it is copied back from), and what
// it will
// hold: the blocks of the prompts routed to it and not yet ended (as SGLang's router inserts a
// prompt into its tree when it routes it), so that a second prompt with the same head follows
// the first before the replica's events say it stored it.
class replica_index {
 public:
  void apply(const cache::cache_event& e);
  void add_pending(const std::vector<std::uint64_t>& hashes);
  void drop_pending(const std::vector<std::uint64_t>& hashes);
  // Leading blocks of `hashes` (a prompt's chain hashes, block by block) the replica holds or
  // is computing.
  std::size_t matched_blocks(const std::vector<std::uint64_t>& hashes) const;
  std::size_t size() const { return blocks_.size(); }  // stored blocks only

 private:
  std::unordered_map<std::uint64_t, std::uint8_t> blocks_;  // hash -> the media keeping it
  std::unordered_multiset<std::uint64_t> pending_;
};

class router_core {
 public:
  router_core(std::size_t num_replicas, routing_options options);

  std::size_t size() const { return replicas_.size(); }
  // Replica r's cache events, in the order it published them.
  void on_events(std::size_t r, const cache::cache_event_log& events);
  // Replica r is up (reachable) or down; a replica that comes back starts with an empty index
  // until its events say otherwise (its AllBlocksCleared at start).
  void set_up(std::size_t r, bool up);
  bool is_up(std::size_t r) const { return replicas_.at(r).up; }

  // The replica for `prompt` in namespace `ns`, counted as one more in flight there, its blocks
  // pending there; nothing when no replica is up. `matched` (optional): the prompt's blocks the
  // chosen replica held or was computing. `hashes` (optional): the prompt's chain hashes, to
  // give back to finished().
  std::optional<std::size_t> choose(const cache::cache_namespace& ns,
                                    const std::vector<cache::token_id>& prompt,
                                    std::size_t* matched = nullptr,
                                    std::vector<std::uint64_t>* hashes = nullptr);
  // `prompt` in flight on r without a choice (a batch's other choices go with its first): one
  // more in flight there, its blocks pending; returns its chain hashes, for finished().
  std::vector<std::uint64_t> start_on(std::size_t r, const cache::cache_namespace& ns,
                                      const std::vector<cache::token_id>& prompt);
  // A request routed to r ended (or failed): one fewer in flight there, and its prompt's blocks
  // (`hashes`, from choose) no longer pending there (the replica's events say what it kept).
  void finished(std::size_t r, const std::vector<std::uint64_t>& hashes = {});
  std::int64_t load(std::size_t r) const { return replicas_.at(r).in_flight; }
  const replica_index& index(std::size_t r) const { return replicas_.at(r).index; }

 private:
  struct replica {
    replica_index index;
    std::int64_t in_flight = 0;
    bool up = true;
  };
  std::optional<std::size_t> least_loaded() const;
  bool balanced() const;

  routing_options options_;
  std::vector<replica> replicas_;
  std::size_t next_ = 0;  // round_robin's
};

// The chain hashes (cache/block_hash.hpp) of every whole block of `prompt` in `ns`.
std::vector<std::uint64_t> prompt_hashes(const cache::cache_namespace& ns,
                                         const std::vector<cache::token_id>& prompt,
                                         std::size_t block_size);

}  // namespace courier::cluster
