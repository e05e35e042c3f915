#pragma once
// Picking the backend and sizing the KV cache from the config.
#include <cstdint>
#include <memory>
#include <vector>

#include "actors/config/config.hpp"
#include "gpu/device.hpp"
#include "gpu/model/llama.hpp"

namespace courier::actors {

// device.backend: "auto" | "sim" | "cuda". Throws std::runtime_error with a one-line reason.
std::unique_ptr<gpu::device> make_device(const config::server_config& cfg);

// The devices of parallel.tensor_size ranks, rank r's at r, each joined to its end of one group
// (`group`, filled; empty for one rank). On the sim: that many sim devices, the threads of
// device.sim.threads shared among them, each with device.sim.memory_mb; on CUDA, GPUs 0..N-1
// with NCCL's collectives (too few GPUs, or a build without NCCL: std::runtime_error naming
// the key). The calling thread is left bound to rank 0's device (device::bind_thread).
std::vector<std::unique_ptr<gpu::device>> make_devices(
    const config::server_config& cfg, std::vector<std::shared_ptr<gpu::collectives>>& group);

// The largest step the scheduler will plan under `cfg`, for a context of max_model_len tokens:
// what the model reserves its workspaces for.
gpu::workspace_limits step_limits_for(const config::server_config& cfg, std::int64_t max_model_len);

// The number of KV blocks: scheduler.num_kv_blocks when set, else what the device's memory
// budget (times device.memory_fraction) leaves after the weights and the reserved workspaces.
// Throws when none fit.
// A hybrid model's recurrent-state slots: scheduler.state_slots, or (0) max_num_seqs capped to
// what half the memory left after the weights and workspaces holds. Throws when not even one fits.
std::int32_t state_slots_for(const config::server_config& cfg, const gpu::device& dev,
                             const model::llama_model& m, std::size_t workspace_bytes);
// A hybrid model's snapshot rows (its prefix cache): cache.ssm_snapshots, or (0) twice the
// state slots, capped to a quarter of the memory left after weights and `reserved_bytes`; 0
// when prefix caching is off.
std::int32_t snapshot_slots_for(const config::server_config& cfg, const gpu::device& dev,
                                const model::llama_model& m, std::size_t reserved_bytes,
                                std::int32_t state_slots);
// A hybrid's draft state rows (llama_model::reserve_states): one per draft a step verifies,
// num_draft for each of max_num_seqs rows, within an eighth of the memory left after
// reserved_bytes; 0 with prompt lookup off.
std::int32_t draft_state_rows_for(const config::server_config& cfg, const gpu::device& dev,
                                  const model::llama_model& m, std::size_t reserved_bytes);

std::int32_t kv_blocks_for(const config::server_config& cfg, const gpu::device& dev,
                           const model::llama_model& m, std::size_t workspace_bytes);

}  // namespace courier::actors
