// silu_mul of elementwise.hpp: out = silu(gate) * up, grid-stride over the elements.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda/kernels/elementwise.hpp"
#include "gpu/cuda/kernels/elementwise_common.cuh"

namespace courier::gpu::cuda {

using namespace detail;

namespace {

// Grid-stride over n / VEC vectors, then the n % VEC tail element by element.
template <int VEC>
__global__ void silu_mul_kernel(const bf16* __restrict__ gate, const bf16* __restrict__ up,
                                bf16* __restrict__ out, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t num_vec = n / VEC;
  for (std::int64_t j = first; j < num_vec; j += stride) {
    float g[VEC], u[VEC];
    load_bf16<VEC>(gate + j * VEC, g);
    load_bf16<VEC>(up + j * VEC, u);
#pragma unroll
    for (int e = 0; e < VEC; ++e) g[e] = g[e] / (1.0f + expf(-g[e])) * u[e];
    store_bf16<VEC>(out + j * VEC, g);
  }
  for (std::int64_t j = num_vec * VEC + first; j < n; j += stride) {
    const float g = __bfloat162float(gate[j]);
    out[j] = __float2bfloat16_rn(g / (1.0f + expf(-g)) * __bfloat162float(up[j]));
  }
}

}  // namespace

cudaError_t launch_silu_mul(const void* gate, const void* up, void* out, std::int64_t n,
                            cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!gate || !up || !out) return cudaErrorInvalidValue;
  const auto* gb = static_cast<const bf16*>(gate);
  const auto* ub = static_cast<const bf16*>(up);
  auto* ob = static_cast<bf16*>(out);
  // The tail loop covers n % 8, so only the pointers decide the width.
  if (aligned(gate, 16) && aligned(up, 16) && aligned(out, 16)) {
    silu_mul_kernel<8><<<flat_blocks(n / 8 + 1), kFlatThreads, 0, stream>>>(gb, ub, ob, n);
  } else {
    silu_mul_kernel<1><<<flat_blocks(n), kFlatThreads, 0, stream>>>(gb, ub, ob, n);
  }
  return cudaGetLastError();
}

}  // namespace courier::gpu::cuda
