// The RMS norms of elementwise.hpp: rms_norm, add_rms_norm (residual kept in bf16) and
// head_rms_norm; one block (or, per head, one warp) per row, reductions in a fixed order.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda/kernels/elementwise.hpp"
#include "gpu/cuda/kernels/elementwise_common.cuh"

namespace courier::gpu::cuda {

using namespace detail;

namespace {

__device__ __forceinline__ float round_bf16(float x) {
  return __bfloat162float(__float2bfloat16_rn(x));
}

// Butterfly sum: every lane ends with the same bits (each step adds the same two values).
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The block's sum, in every thread. blockDim.x is a multiple of 32; call once per kernel.
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float partial[32];
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  v = warp_sum(v);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  return warp_sum(lane < (blockDim.x >> 5) ? partial[lane] : 0.0f);
}

// One block per row; two passes over the row (the second mostly from L1).
// x, out [rows, cols]; w [cols]; out may alias x.
template <int VEC>
__global__ void rms_norm_kernel(const bf16* x, const bf16* __restrict__ w, float eps, bf16* out,
                                std::int64_t cols) {
  const bf16* xr = x + static_cast<std::int64_t>(blockIdx.x) * cols;
  bf16* outr = out + static_cast<std::int64_t>(blockIdx.x) * cols;
  const std::int64_t num_vec = cols / VEC;
  float ss = 0.0f;
  for (std::int64_t j = threadIdx.x; j < num_vec; j += blockDim.x) {
    float f[VEC];
    load_bf16<VEC>(xr + j * VEC, f);
#pragma unroll
    for (int k = 0; k < VEC; ++k) ss += f[k] * f[k];
  }
  const float var = block_sum(ss) / static_cast<float>(cols);
  const float inv = 1.0f / sqrtf(var + eps);
  for (std::int64_t j = threadIdx.x; j < num_vec; j += blockDim.x) {
    float f[VEC], g[VEC];
    load_bf16<VEC>(xr + j * VEC, f);
    load_bf16<VEC>(w + j * VEC, g);
#pragma unroll
    for (int k = 0; k < VEC; ++k) f[k] = g[k] * (f[k] * inv);
    store_bf16<VEC>(outr + j * VEC, f);
  }
}

// residual += x (rounded to bf16 and stored), then out = rms_norm(stored residual). Each thread
// re-reads in the second pass only what it wrote in the first. out may alias x or residual.
template <int VEC>
__global__ void add_rms_norm_kernel(bf16* residual, const bf16* x, const bf16* __restrict__ w,
                                    float eps, bf16* out, std::int64_t cols) {
  const std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * cols;
  bf16* rr = residual + base;
  const bf16* xr = x + base;
  bf16* outr = out + base;
  const std::int64_t num_vec = cols / VEC;
  float ss = 0.0f;
  for (std::int64_t j = threadIdx.x; j < num_vec; j += blockDim.x) {
    float r[VEC], f[VEC];
    load_bf16<VEC>(rr + j * VEC, r);
    load_bf16<VEC>(xr + j * VEC, f);
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
      r[k] = round_bf16(r[k] + f[k]);
      ss += r[k] * r[k];
    }
    store_bf16<VEC>(rr + j * VEC, r);
  }
  const float var = block_sum(ss) / static_cast<float>(cols);
  const float inv = 1.0f / sqrtf(var + eps);
  for (std::int64_t j = threadIdx.x; j < num_vec; j += blockDim.x) {
    float r[VEC], g[VEC];
    load_bf16<VEC>(rr + j * VEC, r);
    load_bf16<VEC>(w + j * VEC, g);
#pragma unroll
    for (int k = 0; k < VEC; ++k) r[k] = g[k] * (r[k] * inv);
    store_bf16<VEC>(outr + j * VEC, r);
  }
}

// One warp per head slice of head_dim; x [num_slices, head_dim] in place; w [head_dim].
template <int VEC>
__global__ void head_rms_norm_kernel(bf16* x, const bf16* __restrict__ w, float eps,
                                     std::int64_t num_slices, int head_dim) {
  const std::int64_t slice =
      static_cast<std::int64_t>(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (slice >= num_slices) return;  // the whole warp leaves together
  const int lane = static_cast<int>(threadIdx.x & 31u);
  bf16* p = x + slice * head_dim;
  const int num_vec = head_dim / VEC;
  float ss = 0.0f;
  for (int j = lane; j < num_vec; j += 32) {
    float f[VEC];
    load_bf16<VEC>(p + j * VEC, f);
#pragma unroll
    for (int k = 0; k < VEC; ++k) ss += f[k] * f[k];
  }
  const float var = warp_sum(ss) / static_cast<float>(head_dim);
  const float inv = 1.0f / sqrtf(var + eps);
  for (int j = lane; j < num_vec; j += 32) {
    float f[VEC], g[VEC];
    load_bf16<VEC>(p + j * VEC, f);
    load_bf16<VEC>(w + j * VEC, g);
#pragma unroll
    for (int k = 0; k < VEC; ++k) f[k] = g[k] * (f[k] * inv);
    store_bf16<VEC>(p + j * VEC, f);
  }
}

}  // namespace

cudaError_t launch_rms_norm(const void* x, const void* w, float eps, void* out,
                            std::int64_t num_rows, std::int64_t hidden, cudaStream_t stream) {
  if (num_rows < 0 || hidden < 0 || num_rows > kMaxGridX) return cudaErrorInvalidValue;
  if (num_rows == 0 || hidden == 0) return cudaSuccess;
  if (!x || !w || !out) return cudaErrorInvalidValue;
  const auto* xb = static_cast<const bf16*>(x);
  const auto* wb = static_cast<const bf16*>(w);
  auto* ob = static_cast<bf16*>(out);
  const int vec = bf16_vec_width(hidden, x, w, out);
  const dim3 grid(static_cast<unsigned>(num_rows));
  const dim3 block(row_threads(hidden / vec, 1024));
  if (vec == 8) {
    rms_norm_kernel<8><<<grid, block, 0, stream>>>(xb, wb, eps, ob, hidden);
  } else if (vec == 2) {
    rms_norm_kernel<2><<<grid, block, 0, stream>>>(xb, wb, eps, ob, hidden);
  } else {
    rms_norm_kernel<1><<<grid, block, 0, stream>>>(xb, wb, eps, ob, hidden);
  }
  return cudaGetLastError();
}

cudaError_t launch_add_rms_norm(void* residual, const void* x, const void* w, float eps, void* out,
                                std::int64_t num_rows, std::int64_t hidden, cudaStream_t stream) {
  if (num_rows < 0 || hidden < 0 || num_rows > kMaxGridX) return cudaErrorInvalidValue;
  if (num_rows == 0 || hidden == 0) return cudaSuccess;
  if (!residual || !x || !w || !out) return cudaErrorInvalidValue;
  auto* rb = static_cast<bf16*>(residual);
  const auto* xb = static_cast<const bf16*>(x);
  const auto* wb = static_cast<const bf16*>(w);
  auto* ob = static_cast<bf16*>(out);
  const int vec = bf16_vec_width(hidden, residual, x, w, out);
  const dim3 grid(static_cast<unsigned>(num_rows));
  const dim3 block(row_threads(hidden / vec, 1024));
  if (vec == 8) {
    add_rms_norm_kernel<8><<<grid, block, 0, stream>>>(rb, xb, wb, eps, ob, hidden);
  } else if (vec == 2) {
    add_rms_norm_kernel<2><<<grid, block, 0, stream>>>(rb, xb, wb, eps, ob, hidden);
  } else {
    add_rms_norm_kernel<1><<<grid, block, 0, stream>>>(rb, xb, wb, eps, ob, hidden);
  }
  return cudaGetLastError();
}

cudaError_t launch_head_rms_norm(void* x, const void* w, float eps, std::int64_t num_tokens,
                                 std::int64_t num_heads, std::int32_t head_dim,
                                 cudaStream_t stream) {
  if (num_tokens < 0 || num_heads < 0 || head_dim < 0) return cudaErrorInvalidValue;
  const std::int64_t num_slices = num_tokens * num_heads;
  if (num_slices == 0 || head_dim == 0) return cudaSuccess;
  if (!x || !w) return cudaErrorInvalidValue;
  constexpr unsigned kWarps = 4;
  const std::int64_t blocks = (num_slices + kWarps - 1) / kWarps;
  if (blocks > kMaxGridX) return cudaErrorInvalidValue;
  auto* xb = static_cast<bf16*>(x);
  const auto* wb = static_cast<const bf16*>(w);
  const dim3 grid(static_cast<unsigned>(blocks));
  const dim3 block(32 * kWarps);
  const int vec = bf16_vec_width(head_dim, x, w);
  if (vec == 8) {
    head_rms_norm_kernel<8><<<grid, block, 0, stream>>>(xb, wb, eps, num_slices, head_dim);
  } else if (vec == 2) {
    head_rms_norm_kernel<2><<<grid, block, 0, stream>>>(xb, wb, eps, num_slices, head_dim);
  } else {
    head_rms_norm_kernel<1><<<grid, block, 0, stream>>>(xb, wb, eps, num_slices, head_dim);
  }
  return cudaGetLastError();
}

}  // namespace courier::gpu::cuda
