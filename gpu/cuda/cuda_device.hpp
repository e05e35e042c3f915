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

}  // namespace courier::gpu::cuda
