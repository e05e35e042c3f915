#pragma once
// The CUDA backend: gpu::device on one NVIDIA GPU (Hopper first), bf16 weights, activations and
// KV pages, f32 logits. Every op is enqueued on the device's one stream; download(), sample() and
// synchronize() wait for it. GEMMs go through cuBLASLt (gemm.hpp), the other ops through the
// kernels of kernels/. Workspaces of attention and sampling are kept and grown, never freed per
// step.
#include <memory>

#include "gpu/device.hpp"

namespace courier::gpu::cuda {

// How the backend works, beyond which GPU (set from the engine.* config keys).
struct cuda_options {
  // Time cuBLASLt's candidate algorithms on the first use of each GEMM shape and keep the
  // fastest (gemm.hpp); false: its first heuristic, untimed.
  bool gemm_autotune = true;
};

// Makes the backend on GPU `ordinal` (std::runtime_error when it cannot be used).
std::unique_ptr<device> make_cuda_device(int ordinal, const cuda_options& options = {});

// The GPU and the stream of a device make_cuda_device made (nullptr stream and ordinal -1 for
// any other device): where NCCL's collectives for it are enqueued (nccl_collectives.hpp).
struct cuda_placement {
  int ordinal = -1;
  void* stream = nullptr;  // cudaStream_t
};
cuda_placement placement_of(const device& dev);

// GPUs visible to this process (0 without a driver).
int visible_gpus();

}  // namespace courier::gpu::cuda
