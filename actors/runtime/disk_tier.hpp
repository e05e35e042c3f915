#pragma once
// The KV disk tier from a config (cache.disk_tier_*): the file, reserved and (persisted) scanned
// for what a previous run left, and what the disk actor and the scheduler need of it.
#include <memory>
#include <optional>

#include "actors/config/config.hpp"
#include "actors/disk/disk_actor.hpp"
#include "actors/scheduler/kv_manager.hpp"

namespace courier::actors {

struct engine_resources;

struct disk_tier {
  disk_setup io;          // for spawn_disk
  disk_tier_setup slots;  // for scheduler_options::disk
};

// Nothing when the config has no disk tier or the model no KV host tier (a hybrid's); a
// std::runtime_error naming the config key when the file cannot be had.
std::optional<disk_tier> open_disk_tier(const config::server_config& cfg,
                                        const engine_resources& res);

}  // namespace courier::actors
