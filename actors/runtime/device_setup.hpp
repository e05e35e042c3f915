#pragma once
// Picking the backend and sizing the KV cache from the config.
#include <cstdint>
#include <memory>

#include "actors/config/config.hpp"
#include "gpu/device.hpp"
#include "gpu/model/llama.hpp"

namespace courier::actors {

// device.backend: "auto" | "sim" | "cuda". Throws std::runtime_error with a one-line reason.
std::unique_ptr<gpu::device> make_device(const config::server_config& cfg);

// The number of KV blocks: scheduler.num_kv_blocks when set, else what the device's memory
// budget (times device.memory_fraction) leaves after the weights. Throws when none fit.
std::int32_t kv_blocks_for(const config::server_config& cfg, const gpu::device& dev,
                           const model::llama_model& m);

}  // namespace courier::actors
