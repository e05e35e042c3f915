#pragma once
// Random fill (device::fill_random on the CUDA backend): bench-forward's random weights, made on
// the device so that an 8B-parameter shape needs no host generation and no 16 GB upload.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace courier::gpu::cuda {

// out[i] = bf16(random_fill_value(seed, i, center, scale)) for i < n; out bf16 [n]. Allocates
// nothing, never synchronizes; n == 0 launches nothing.
[[nodiscard]] cudaError_t launch_fill_random(void* out, std::int64_t n, std::uint64_t seed,
                                             float center, float scale, cudaStream_t stream);

}  // namespace courier::gpu::cuda
