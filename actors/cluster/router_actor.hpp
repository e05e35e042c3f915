#pragma once
// The front end's router: the scheduler's interface (scheduler_handle.hpp), so admission talks
// to it exactly as to a local scheduler, in front of courier replicas reached through CAF's
// middleman (cluster.replicas). Each request goes to the replica cluster/router_core picks; the
// router stands in as its reply_to and passes every event on, so it knows when a request ends
// (the replica's load) and which requests a replica held when it went away.
//
// Faults: a replica's scheduler is monitored (its process gone: a down message) and asked for
// its stats every cluster.heartbeat_ms (3 unanswered: a partition); either way it is down: a
// request of it that has streamed nothing yet is sent to another replica, one that has ends
// with an error event naming the replica, and new requests avoid it. A replica that answers
// again (heartbeats, or a reconnection after its process came back) is used again, its cache
// index rebuilt from the snapshot its scheduler sends a new watcher.
#include <caf/all.hpp>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/scheduler/scheduler_handle.hpp"
#include "cluster/router_core.hpp"
#include "messages/type_ids.hpp"

namespace courier::actors {

using router_impl = scheduler_actor::extend<caf::reacts_to<msg::token_event>,
                                            caf::reacts_to<msg::submit_ack>,
                                            caf::reacts_to<msg::replica_update>,
                                            caf::reacts_to<msg::replica_back>,
                                            caf::reacts_to<msg::heartbeat_atom>,
                                            // The replicas' metrics as one exposition, each
                                            // sample labelled replica="host:port".
                                            caf::replies_to<msg::scrape_atom>::with<std::string>>;

struct router_setup {
  std::vector<std::string> addresses;      // host:port per replica
  std::vector<scheduler_actor> handles;    // connected at start (null: not yet)
  cluster::routing_options routing;
  bool isolate_by_tenant = false;          // namespaces include the tenant (cache isolation)
  std::int64_t heartbeat_ms = 500;
  msg::engine_ready ready;                 // a replica's, answered to ready_atom
};

// Spawns the router (its handle converts to scheduler_actor).
router_impl spawn_router(caf::actor_system& sys, router_setup setup);

}  // namespace courier::actors
