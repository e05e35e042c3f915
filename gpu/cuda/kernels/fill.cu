#include "gpu/cuda/kernels/fill.hpp"

#include <cuda_bf16.h>

#include "gpu/cuda/kernels/launch.cuh"
#include "gpu/random_fill.hpp"

namespace courier::gpu::cuda {

namespace {

__global__ void fill_random_kernel(__nv_bfloat16* out, std::int64_t n, std::uint64_t seed,
                                   float center, float scale) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = __float2bfloat16_rn(
        random_fill_value(seed, static_cast<std::uint64_t>(i), center, scale));
  }
}

}  // namespace

cudaError_t launch_fill_random(void* out, std::int64_t n, std::uint64_t seed, float center,
                               float scale, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (!out || n < 0) return cudaErrorInvalidValue;
  constexpr int threads = 256;
  const std::int64_t want = (n + threads - 1) / threads;
  const int blocks = static_cast<int>(want < 65536 ? want : 65536);
  detail::launch_kernel(fill_random_kernel, static_cast<unsigned>(blocks), threads, 0, stream,
                        static_cast<__nv_bfloat16*>(out), n, seed, center, scale);
  return cudaGetLastError();
}

}  // namespace courier::gpu::cuda
