#pragma once
// The running server core: the actor system, the engine (with the model loaded) and the
// scheduler, built from a server_config. Owned by `courier generate`, `courier serve` and the
// integration tests. Destruction sends exit to the actors before the system goes, so no handle
// outlives the actor_system (docs/CAF017.md §3.7).
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <memory>

#include "actors/cluster/replica_gate.hpp"
#include "actors/config/config.hpp"
#include "actors/disk/disk_handle.hpp"
#include "actors/engine/engine_handle.hpp"
#include "actors/scheduler/scheduler_handle.hpp"
#include "actors/telemetry/telemetry_handle.hpp"

namespace courier::actors {

struct engine_resources;   // actors/engine/engine_actor.hpp
struct scheduler_options;  // actors/scheduler/scheduler_core.hpp
struct telemetry_options;  // actors/telemetry/telemetry_actor.hpp

class runtime {
 public:
  // Loads the model (model_error on a bad folder) and starts the actors, with
  // server.actor_threads CAF worker threads (2 suits a 2-core machine: docs/CAF017.md P7).
  explicit runtime(const config::server_config& cfg);
  ~runtime();
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  caf::actor_system& system() { return *sys_; }
  const scheduler_actor& scheduler() const { return scheduler_; }
  const telemetry_actor& telemetry() const { return telemetry_; }
  const msg::engine_ready& ready() const { return ready_; }
  // The port the scheduler is published on (cluster.listen; 0: not a replica).
  std::uint16_t cluster_port() const { return listen_port_; }
  // A replica: how it compiles the grammars requests bring over the wire (admission's
  // registry, once configured); until set, such requests fail with a clear error.
  void set_wire_grammars(wire_grammar_fn f) { wire_grammars_->set(std::move(f)); }

 private:
  // The constructor's parts, in order: the actor system, the engine (ready), the telemetry
  // options, the cache events' and the disk tier's outlets.
  void start_actor_system(const config::server_config& cfg, bool front);
  void start_engine(std::shared_ptr<engine_resources> res);
  telemetry_options telemetry_options_for(const config::server_config& cfg) const;
  void open_outlets(const config::server_config& cfg, engine_resources& res,
                    scheduler_options& sopts);

  std::unique_ptr<caf::actor_system_config> caf_cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  engine_actor engine_;
  scheduler_actor scheduler_;
  telemetry_actor telemetry_;
  disk_actor disk_;  // null: no KV disk tier
  msg::engine_ready ready_;
  std::uint16_t listen_port_ = 0;
  std::shared_ptr<wire_grammars> wire_grammars_ = std::make_shared<wire_grammars>();
};

// The engine's resources from a config: device, model, KV cache sized by the memory budget.
std::shared_ptr<engine_resources> load_engine_resources(const config::server_config& cfg);

// The scheduler's options from a config and what the engine reported.
scheduler_options scheduler_options_from(const config::server_config& cfg);

}  // namespace courier::actors
