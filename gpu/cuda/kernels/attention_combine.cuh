#pragma once
// Internal to the attention kernels: the combine kernel (attention.cu's kernel 3, split only);
// instantiated by attention.cu's launch for each head_dim.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda/kernels/attention_math.cuh"
#include "gpu/cuda/kernels/attention_params.cuh"

namespace courier::gpu::cuda::detail {

// One warp per (token, head); only tokens whose context spans several chunks have partials.
// Lane i holds the kPerLane consecutive elements from i * kPerLane: an even count, so loads are
// float2 / float4 and stores bf16 pairs; with head_dim 32 (96) only 16 (24) lanes hold any. Each
// element's fold is its own, so the layout does not touch the arithmetic.
template <int HD>
__global__ void __launch_bounds__(kCombineWarps * 32) combine_kernel(const combine_params p) {
  constexpr int kPerLane = (HD / 32) % 2 == 0 ? HD / 32 : HD / 32 + 1;
  constexpr int kLanes = HD / kPerLane;
  static_assert(HD % 32 == 0 && HD % kPerLane == 0 && kLanes <= 32, "head_dim a multiple of 32");
  static_assert(kPerLane == 2 || kPerLane % 4 == 0, "float2 or float4 loads");
  const std::int64_t w = static_cast<std::int64_t>(blockIdx.x) * kCombineWarps + threadIdx.x / 32;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  if (w >= static_cast<std::int64_t>(p.num_tokens) * p.num_q_heads) return;
  if (lane >= kLanes) return;  // no warp-wide operations below
  const std::int64_t tok = w / p.num_q_heads;
  int chunks = p.positions[tok] / kChunk + 1;
  if (chunks <= 1) return;  // written by the attention kernel
  if (chunks > p.max_chunks) chunks = p.max_chunks;
  const std::int64_t base = w * p.max_chunks;
  float M = -INFINITY, L = 0.0f, acc[kPerLane];
#pragma unroll
  for (int e = 0; e < kPerLane; ++e) acc[e] = 0.0f;
  for (int c = 0; c < chunks; ++c) {
    const float2 ml = p.part_ml[base + c];
    const float* const pa = p.part_acc + (base + c) * HD + lane * kPerLane;
    float chunk[kPerLane];
    if constexpr (kPerLane % 4 == 0) {
#pragma unroll
      for (int e = 0; e < kPerLane; e += 4) {
        const float4 v = *reinterpret_cast<const float4*>(pa + e);
        chunk[e] = v.x, chunk[e + 1] = v.y, chunk[e + 2] = v.z, chunk[e + 3] = v.w;
      }
    } else {
      const float2 v = *reinterpret_cast<const float2*>(pa);
      chunk[0] = v.x, chunk[1] = v.y;
    }
    const fold_weights fw = fold_state(M, L, ml.x, ml.y);
#pragma unroll
    for (int e = 0; e < kPerLane; ++e) acc[e] = fold_acc(acc[e], chunk[e], fw);
  }
  const float inv = inverse_sum(L);
  bf16* const o = p.out + w * HD + lane * kPerLane;
#pragma unroll
  for (int e = 0; e < kPerLane; e += 2) {
    *reinterpret_cast<__nv_bfloat162*>(o + e) =
        __floats2bfloat162_rn(finish(acc[e], inv), finish(acc[e + 1], inv));
  }
}

}  // namespace courier::gpu::cuda::detail
