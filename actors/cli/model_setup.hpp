#pragma once
// What every subcommand that runs a model does first: read the config (file + --set), pick the
// backend, load the model folder, and size the KV cache.
#include <memory>
#include <string>
#include <vector>

#include "actors/config/config.hpp"
#include "gpu/device.hpp"
#include "gpu/model/llama.hpp"

namespace courier::cli {

struct loaded_model {
  std::unique_ptr<gpu::device> dev;          // Owned; declared first so it is destroyed last.
  std::unique_ptr<model::llama_model> model;
};

// backend: "auto" | "sim" | "cuda". Throws std::runtime_error with a one-line reason.
std::unique_ptr<gpu::device> make_device(const config::server_config& cfg);

// Prints "loading DIR on DEVICE" to stderr, then loads. Throws model::model_error.
loaded_model load_model(const config::server_config& cfg);

// The number of KV blocks: scheduler.num_kv_blocks when set, else what the device's memory
// budget (times device.memory_fraction) leaves after the weights.
std::int32_t kv_blocks_for(const config::server_config& cfg, const loaded_model& m);

}  // namespace courier::cli
