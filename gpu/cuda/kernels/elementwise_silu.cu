// silu_mul of elementwise.hpp: out[t, i] = silu(gate_up[t, i]) * gate_up[t, I + i], grid-stride
// over the output's vectors.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda/kernels/elementwise.hpp"
#include "gpu/cuda/kernels/elementwise_common.cuh"
#include "gpu/cuda/kernels/launch.cuh"

namespace courier::gpu::cuda {

using namespace detail;

namespace {

// Grid-stride over rows * (inter / VEC) vectors of the output; gate and up of a vector are VEC
// elements at the same column of the row's two halves. inter % VEC == 0.
template <int VEC>
__global__ void silu_mul_kernel(const bf16* __restrict__ gate_up, bf16* __restrict__ out,
                                std::int64_t num_rows, std::int64_t inter) {
  const std::int64_t per_row = inter / VEC;
  const std::int64_t n = num_rows * per_row;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < n;
       j += stride) {
    const std::int64_t t = j / per_row;
    const std::int64_t c = (j - t * per_row) * VEC;
    const bf16* gate = gate_up + t * 2 * inter + c;
    float g[VEC], u[VEC];
    load_bf16<VEC>(gate, g);
    load_bf16<VEC>(gate + inter, u);
#pragma unroll
    for (int e = 0; e < VEC; ++e) g[e] = g[e] / (1.0f + expf(-g[e])) * u[e];
    store_bf16<VEC>(out + t * inter + c, g);
  }
}

}  // namespace

cudaError_t launch_silu_mul(const void* gate_up, void* out, std::int64_t num_rows,
                            std::int64_t intermediate, cudaStream_t stream) {
  if (num_rows < 0 || intermediate < 0) return cudaErrorInvalidValue;
  if (num_rows == 0 || intermediate == 0) return cudaSuccess;
  if (!gate_up || !out) return cudaErrorInvalidValue;
  const auto* gb = static_cast<const bf16*>(gate_up);
  auto* ob = static_cast<bf16*>(out);
  // Rows of gate_up and out start at multiples of intermediate, so it and the bases decide.
  const int vec = bf16_vec_width(intermediate, gate_up, out);
  const unsigned blocks = flat_blocks(num_rows * (intermediate / vec));
  if (vec == 8) {
    launch_kernel(silu_mul_kernel<8>, blocks, kFlatThreads, 0, stream, gb, ob, num_rows,
                  intermediate);
  } else if (vec == 2) {
    launch_kernel(silu_mul_kernel<2>, blocks, kFlatThreads, 0, stream, gb, ob, num_rows,
                  intermediate);
  } else {
    launch_kernel(silu_mul_kernel<1>, blocks, kFlatThreads, 0, stream, gb, ob, num_rows,
                  intermediate);
  }
  return cudaGetLastError();
}

}  // namespace courier::gpu::cuda
