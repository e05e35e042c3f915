#pragma once
// Messages between courier replicas and the front end that routes to them (cluster.*): a
// replica's prefix cache events, for the router's cache-aware index (cluster/router_core), sent
// over CAF's middleman. The events mirror cache/cache_events.hpp field for field (messages/
// includes nothing of cache/).
#include <caf/actor.hpp>
#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <vector>

namespace courier::msg {

struct cache_event_msg {
  std::uint8_t kind = 0;  // cache::cache_event::kind: 0 stored, 1 removed, 2 cleared
  std::vector<std::uint64_t> hashes;
  bool has_parent = false;
  std::uint64_t parent = 0;
  std::vector<std::uint32_t> tokens;
  std::uint32_t block_size = 0;
  std::uint32_t adapter_id = 0;
  std::uint8_t medium = 0;  // cache::cache_medium: 0 the device, 1 the host tier, 2 disk
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cache_event_msg& x) {
  return f(caf::meta::type_name("cache_event_msg"), x.kind, x.hashes, x.has_parent, x.parent,
           x.tokens, x.block_size, x.adapter_id, x.medium);
}

// scheduler -> a watcher: the events since the last update, in order. The first update a
// watcher gets is the cache's whole contents (an all-cleared, then every stored block).
struct cache_update {
  std::vector<cache_event_msg> events;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cache_update& x) {
  return f(caf::meta::type_name("cache_update"), x.events);
}

// -> scheduler: send `watcher` (a router) a replica_update tagged `replica`, `generation` for
// each batch of cache events from now until it goes down; a new watch by the same actor
// replaces its tags. Sent straight to the router, after a step's events and before that step's
// token events, so a router that sees a request finish already knows the blocks it stored
// (messages between two actors keep their order, also over the network).
struct watch_cache {
  caf::actor watcher;
  std::uint32_t replica = 0;
  std::uint64_t generation = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, watch_cache& x) {
  return f(caf::meta::type_name("watch_cache"), x.watcher, x.replica, x.generation);
}

// scheduler -> router: replica `replica`'s batch of cache events (`generation`: which
// connection to it the router watched; updates of an older one are dropped).
struct replica_update {
  std::uint32_t replica = 0;
  std::uint64_t generation = 0;
  cache_update update;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, replica_update& x) {
  return f(caf::meta::type_name("replica_update"), x.replica, x.generation, x.update);
}

// Inside a front end: replica `replica` answered a connection again (its scheduler's handle).
struct replica_back {
  std::uint32_t replica = 0;
  caf::actor handle;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, replica_back& x) {
  return f(caf::meta::type_name("replica_back"), x.replica, x.handle);
}

}  // namespace courier::msg
