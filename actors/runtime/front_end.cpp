#include "actors/runtime/front_end.hpp"

#include <caf/io/all.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <stdexcept>

#include "actors/cluster/router_actor.hpp"

namespace courier::actors {

std::pair<std::string, std::uint16_t> split_address(const std::string& address,
                                                    const std::string& key) {
  const std::size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size() ||
      address.find_first_not_of("0123456789", colon + 1) != std::string::npos ||
      std::stol(address.substr(colon + 1)) > 65535) {
    throw std::runtime_error(fmt::format("{}: expected host:port, got '{}'", key, address));
  }
  return {address.substr(0, colon), static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1)))};
}

std::uint16_t publish_replica(caf::actor_system& sys, const scheduler_actor& scheduler,
                              const std::string& listen) {
  const auto [host, port] = split_address(listen, "cluster.listen");
  auto published = sys.middleman().publish(scheduler, port, host.c_str(), true);
  if (!published) {
    throw std::runtime_error(fmt::format("cluster.listen: cannot listen on {}: {}", listen,
                                         sys.render(published.error())));
  }
  std::fprintf(stderr, "courier: replica: scheduler published on %s:%u\n", host.c_str(),
               static_cast<unsigned>(*published));
  return *published;
}

front_end start_front_end(caf::actor_system& sys, const config::server_config& cfg) {
  router_setup setup;
  std::string failures;
  front_end out;
  bool have_ready = false;
  caf::scoped_actor self{sys};
  for (const std::string& address : cfg.cluster.replicas) {
    const auto [host, port] = split_address(address, "cluster.replicas");
    setup.addresses.push_back(address);
    auto h = sys.middleman().remote_actor<scheduler_actor>(host, port);
    if (!h) {
      failures += fmt::format("; {}: {}", address, sys.render(h.error()));
      setup.handles.emplace_back();
      continue;
    }
    setup.handles.push_back(*h);
    if (!have_ready) {
      self->request(*h, std::chrono::seconds(10), msg::ready_atom_v)
          .receive([&](msg::engine_ready& r) { out.ready = std::move(r), have_ready = true; },
                   [&](caf::error& e) { failures += "; " + address + ": " + sys.render(e); });
    }
  }
  if (!have_ready) {
    throw std::runtime_error("cluster.replicas: no replica answered" + failures);
  }
  if (!failures.empty()) {
    std::fprintf(stderr, "courier: front end: retrying later%s\n", failures.c_str());
  }
  setup.ready = out.ready;
  setup.routing.block_size = static_cast<std::size_t>(out.ready.block_size);
  setup.routing.policy = cfg.cluster.routing == "round_robin"
                             ? cluster::routing_policy::round_robin
                             : cfg.cluster.routing == "least_loaded"
                                   ? cluster::routing_policy::least_loaded
                                   : cluster::routing_policy::cache_aware;
  setup.routing.balance_abs = cfg.cluster.balance_abs;
  setup.routing.balance_rel = cfg.cluster.balance_rel;
  setup.routing.cache_threshold = cfg.cluster.cache_threshold;
  setup.isolate_by_tenant = cfg.scheduler.cache_isolation == "tenant";
  setup.heartbeat_ms = cfg.cluster.heartbeat_ms;
  out.router = spawn_router(sys, std::move(setup));
  return out;
}

}  // namespace courier::actors
