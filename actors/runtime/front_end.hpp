#pragma once
// A front end's side of the runtime (cluster.replicas): connects to every replica's scheduler
// through CAF's middleman and spawns the router (actors/cluster/router_actor.hpp) that stands
// in for the local scheduler; and a replica's (cluster.listen): its scheduler published.
#include <caf/all.hpp>

#include <cstdint>
#include <string>

#include "actors/config/config.hpp"
#include "actors/scheduler/scheduler_handle.hpp"
#include "messages/type_ids.hpp"

namespace courier::actors {

struct front_end {
  scheduler_actor router;
  msg::engine_ready ready;  // the first replica's that answered
};

// Connects to cluster.replicas (those that do not answer now are retried by the router) and
// spawns the router. std::runtime_error naming cluster.replicas when none answers.
front_end start_front_end(caf::actor_system& sys, const config::server_config& cfg);

// Publishes `scheduler` on cluster.listen (host:port; port 0: any free one); returns the port.
// std::runtime_error naming cluster.listen when it cannot.
std::uint16_t publish_replica(caf::actor_system& sys, const scheduler_actor& scheduler,
                              const std::string& listen);

// Splits "host:port" (std::runtime_error naming `key` when it is not one).
std::pair<std::string, std::uint16_t> split_address(const std::string& address,
                                                    const std::string& key);

}  // namespace courier::actors
