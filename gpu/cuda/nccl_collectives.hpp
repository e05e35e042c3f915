#pragma once
// Tensor parallelism's collectives among the GPUs of this process, through NCCL: one
// communicator per GPU (ncclCommInitAll), each rank's calls enqueued on its device's stream by
// the thread that drives that device (one thread per rank, as the engine's tp_peers run them).
// Inside a CUDA graph capture the calls are captured like any kernel (NCCL 2.9+).
#include <memory>
#include <vector>

#include "gpu/collectives.hpp"
#include "gpu/device.hpp"

namespace courier::gpu::cuda {

// The ends of one group over `devs` (each made by make_cuda_device, on distinct GPUs), rank r's
// at r: join devs[r] to it. std::runtime_error when NCCL cannot be loaded or initialised.
std::vector<std::shared_ptr<collectives>> make_nccl_group(const std::vector<device*>& devs);

}  // namespace courier::gpu::cuda
