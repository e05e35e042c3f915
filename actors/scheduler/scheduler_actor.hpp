#pragma once
// The scheduler actor: the only owner of sequence state and of the cache structures. It turns
// submits into steps for the engine (one step in flight, two with overlap) and results into
// token_events. It runs detached, on a thread of its own (spawn_scheduler), so the CAF workers'
// admission work (parsing, templating, tokenizing) never delays a step.
#include <caf/all.hpp>

#include "actors/disk/disk_handle.hpp"
#include "actors/engine/engine_handle.hpp"
#include "actors/scheduler/scheduler_handle.hpp"
#include "actors/scheduler/scheduler_core.hpp"
#include "actors/telemetry/telemetry_handle.hpp"
#include "messages/type_ids.hpp"

namespace courier::actors {

// A router watching the prefix cache, and the tags its updates carry (msg::watch_cache).
struct cache_watcher {
  caf::actor actor;
  std::uint32_t replica = 0;
  std::uint64_t generation = 0;
};

struct scheduler_state {
  static inline const char* name = "scheduler";
  std::unique_ptr<scheduler_core> core;
  engine_actor engine;
  telemetry_actor telemetry;  // null: no metrics reports
  disk_actor disk;            // the KV disk tier's I/O (null: no disk tier)
  std::uint64_t disk_errors = 0;  // failed disk copies, for rate-limiting their warnings
  std::int64_t disk_read_timeout_ms = 10000;
  msg::engine_ready ready;  // answered to ready_atom
  // Routers watching the prefix cache (watch_cache), sent every batch of its events.
  std::shared_ptr<std::vector<cache_watcher>> watchers;
};

scheduler_actor::behavior_type scheduler_fn(scheduler_actor::stateful_pointer<scheduler_state> self,
                                            engine_actor engine, scheduler_options opts,
                                            msg::engine_ready ready,
                                            telemetry_actor telemetry, disk_actor disk);

// Spawns the scheduler detached, as the engine is: the scheduler must never wait for a CAF
// worker that request actors keep busy. Every place that starts a scheduler uses this.
scheduler_actor spawn_scheduler(caf::actor_system& sys, engine_actor engine,
                                scheduler_options opts, msg::engine_ready ready,
                                telemetry_actor telemetry, disk_actor disk = {});

}  // namespace courier::actors
