#pragma once
// Internal to the element-wise kernels (elementwise_*.cu): the arithmetic more than one of them
// does, written once so that the fused kernels round exactly where the single-purpose ones do:
// bf16 rounding, warp and block sums in a fixed order, a head's RMS scale, the RoPE angle and
// rotation. Each is the sim's f32 formula (gpu/sim/); the reduction orders are the kernels' own.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "gpu/cuda/kernels/elementwise_common.cuh"

namespace courier::gpu::cuda::detail {

// x rounded to bf16 and back: what storing a value and loading it again gives.
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

// 1 / sqrt(mean(x^2) + eps) of one head p[head_dim], by one warp (all 32 lanes call it): lane l
// sums the squares of vectors l, l + 32, ... of VEC elements in order, then the butterfly; every
// lane gets the same bits. p is aligned to VEC * 2 bytes and head_dim % VEC == 0. The normalised
// element i is then w[i] * (x[i] * scale).
template <int VEC>
__device__ __forceinline__ float head_rms_scale(const bf16* p, int head_dim, float eps, int lane) {
  float ss = 0.0f;
  for (int j = lane; j < head_dim / VEC; j += 32) {
    float f[VEC];
    load_bf16<VEC>(p + j * VEC, f);
#pragma unroll
    for (int k = 0; k < VEC; ++k) ss += f[k] * f[k];
  }
  const float var = warp_sum(ss) / static_cast<float>(head_dim);
  return 1.0f / sqrtf(var + eps);
}

// cos and sin of the RoPE angle f32(pos * inv_freq), taken in double and rounded to f32: the
// sim's (and transformers') values to the last bit.
__device__ __forceinline__ void rope_cos_sin(float pos, float inv_freq, float& c, float& s) {
  const double angle = static_cast<double>(__fmul_rn(pos, inv_freq));
  double sd, cd;
  sincos(angle, &sd, &cd);
  c = static_cast<float>(cd);
  s = static_cast<float>(sd);
}

// (x1, x2) -> (x1*c - x2*s, x2*c + x1*s), the pair (i, i + head_dim / 2) of rotate_half. The _rn
// intrinsics keep every product and sum a separate rounding, as in the sim (no FMA).
__device__ __forceinline__ void rope_rotate(float& x1, float& x2, float c, float s) {
  const float a = x1, b = x2;
  x1 = __fsub_rn(__fmul_rn(a, c), __fmul_rn(b, s));
  x2 = __fadd_rn(__fmul_rn(b, c), __fmul_rn(a, s));
}

}  // namespace courier::gpu::cuda::detail
