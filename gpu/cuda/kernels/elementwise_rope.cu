// Rotary embedding (elementwise.hpp's launch_rope): the sim's f32 angle and cos/sin.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda/kernels/elementwise.hpp"
#include "gpu/cuda/kernels/elementwise_common.cuh"

namespace courier::gpu::cuda {

using namespace detail;

namespace {

constexpr int kMaxRopeHalf = 256;  // head_dim <= 512

// One block per token: its cos/sin table in shared memory, then every (head, VEC pairs) of q and k.
// The _rn intrinsics keep the products and sums separate roundings, as in the sim (no FMA).
template <int VEC>
__global__ void rope_kernel(bf16* q, bf16* k, const std::int32_t* __restrict__ positions,
                            const float* __restrict__ inv_freq, int num_q_heads, int num_kv_heads,
                            int head_dim) {
  __shared__ float cos_s[kMaxRopeHalf];
  __shared__ float sin_s[kMaxRopeHalf];
  const std::int64_t t = blockIdx.x;
  const int half = head_dim / 2;
  const float pos = static_cast<float>(positions[t]);
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    const double angle = static_cast<double>(__fmul_rn(pos, inv_freq[i]));
    double s, c;
    sincos(angle, &s, &c);
    cos_s[i] = static_cast<float>(c);
    sin_s[i] = static_cast<float>(s);
  }
  __syncthreads();
  const int per_head = half / VEC;
  const int total = (num_q_heads + num_kv_heads) * per_head;
  for (int j = threadIdx.x; j < total; j += blockDim.x) {
    const int head = j / per_head;
    const int i0 = (j - head * per_head) * VEC;
    bf16* p = head < num_q_heads ? q + (t * num_q_heads + head) * head_dim
                                 : k + (t * num_kv_heads + (head - num_q_heads)) * head_dim;
    float a[VEC], b[VEC];
    load_bf16<VEC>(p + i0, a);
    load_bf16<VEC>(p + half + i0, b);
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      const float c = cos_s[i0 + e], s = sin_s[i0 + e];
      const float x1 = a[e], x2 = b[e];
      a[e] = __fsub_rn(__fmul_rn(x1, c), __fmul_rn(x2, s));
      b[e] = __fadd_rn(__fmul_rn(x2, c), __fmul_rn(x1, s));
    }
    store_bf16<VEC>(p + i0, a);
    store_bf16<VEC>(p + half + i0, b);
  }
}

}  // namespace

cudaError_t launch_rope(void* q, void* k, std::int64_t num_tokens, std::int32_t num_q_heads,
                        std::int32_t num_kv_heads, std::int32_t head_dim,
                        const std::int32_t* positions, const float* inv_freq, cudaStream_t stream) {
  if (num_tokens < 0 || num_tokens > kMaxGridX || num_q_heads < 0 || num_kv_heads < 0 ||
      head_dim < 0 || head_dim % 2 != 0 || head_dim / 2 > kMaxRopeHalf) {
    return cudaErrorInvalidValue;
  }
  const int half = head_dim / 2;
  if (num_tokens == 0 || half == 0 || num_q_heads + num_kv_heads == 0) return cudaSuccess;
  if ((num_q_heads > 0 && !q) || (num_kv_heads > 0 && !k) || !positions || !inv_freq) {
    return cudaErrorInvalidValue;
  }
  auto* qb = static_cast<bf16*>(q);
  auto* kb = static_cast<bf16*>(k);
  // q and k rows start at multiples of head_dim, so half's width and the bases decide.
  const int vec = bf16_vec_width(half, q, k);
  const dim3 grid(static_cast<unsigned>(num_tokens));
  const dim3 block(
      row_threads(static_cast<std::int64_t>(num_q_heads + num_kv_heads) * half / vec, 256));
  if (vec == 8) {
    rope_kernel<8><<<grid, block, 0, stream>>>(qb, kb, positions, inv_freq, num_q_heads,
                                               num_kv_heads, head_dim);
  } else if (vec == 2) {
    rope_kernel<2><<<grid, block, 0, stream>>>(qb, kb, positions, inv_freq, num_q_heads,
                                               num_kv_heads, head_dim);
  } else {
    rope_kernel<1><<<grid, block, 0, stream>>>(qb, kb, positions, inv_freq, num_q_heads,
                                               num_kv_heads, head_dim);
  }
  return cudaGetLastError();
}

}  // namespace courier::gpu::cuda
