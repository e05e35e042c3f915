// The RMS norms of elementwise.hpp: rms_norm and add_rms_norm (residual kept in bf16); one block
// per row, reductions in a fixed order (block_sum of elementwise_math.cuh). The per-head norm of
// q and k is part of the fused kernel of elementwise_qkv.cu.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda/kernels/elementwise.hpp"
#include "gpu/cuda/kernels/elementwise_common.cuh"
#include "gpu/cuda/kernels/elementwise_math.cuh"
#include "gpu/cuda/kernels/launch.cuh"

namespace courier::gpu::cuda {

using namespace detail;

namespace {

// The second pass of both norms, by every thread of the block: out = w * (src * inv), where inv
// is 1 / sqrt(mean square + eps) from the threads' partial sums of squares `ss`. A thread reads
// the same elements of src as in its first pass.
template <int VEC>
__device__ __forceinline__ void write_normed(const bf16* src, const bf16* __restrict__ w, float ss,
                                             float eps, bf16* out, std::int64_t cols) {
  const float var = block_sum(ss) / static_cast<float>(cols);
  const float inv = 1.0f / sqrtf(var + eps);
  const std::int64_t num_vec = cols / VEC;
  for (std::int64_t j = threadIdx.x; j < num_vec; j += blockDim.x) {
    float f[VEC], g[VEC];
    load_bf16<VEC>(src + j * VEC, f);
    load_bf16<VEC>(w + j * VEC, g);
#pragma unroll
    for (int k = 0; k < VEC; ++k) f[k] = g[k] * (f[k] * inv);
    store_bf16<VEC>(out + j * VEC, f);
  }
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
  write_normed<VEC>(xr, w, ss, eps, outr, cols);
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
  write_normed<VEC>(rr, w, ss, eps, outr, cols);
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
    launch_kernel(rms_norm_kernel<8>, grid, block, 0, stream, xb, wb, eps, ob, hidden);
  } else if (vec == 2) {
    launch_kernel(rms_norm_kernel<2>, grid, block, 0, stream, xb, wb, eps, ob, hidden);
  } else {
    launch_kernel(rms_norm_kernel<1>, grid, block, 0, stream, xb, wb, eps, ob, hidden);
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
    launch_kernel(add_rms_norm_kernel<8>, grid, block, 0, stream, rb, xb, wb, eps, ob,
                  hidden);
  } else if (vec == 2) {
    launch_kernel(add_rms_norm_kernel<2>, grid, block, 0, stream, rb, xb, wb, eps, ob,
                  hidden);
  } else {
    launch_kernel(add_rms_norm_kernel<1>, grid, block, 0, stream, rb, xb, wb, eps, ob,
                  hidden);
  }
  return cudaGetLastError();
}

}  // namespace courier::gpu::cuda
