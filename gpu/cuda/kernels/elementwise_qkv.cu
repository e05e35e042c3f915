// elementwise.hpp's launch_qkv_rope_kv_write: from the fused projection's output to what
// attention reads, in one launch: per token, q/k head norm (optional), RoPE, q to its own buffer,
// k and v into the paged cache. It does what head_rms_norm, rope and kv_write kernels would do one
// after the other, rounding to bf16 where each of them stored: after the norm and after the
// rotation.
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

constexpr int kMaxRopeHalf = 256;  // head_dim <= 512
constexpr int kMaxWarps = 16;      // heads in flight per token

// VEC bf16 elements as one word, for raw copies (bits kept, NaN payloads included).
template <int VEC>
struct bf16_word;
template <>
struct bf16_word<8> {
  using type = uint4;
};
template <>
struct bf16_word<2> {
  using type = std::uint32_t;
};
template <>
struct bf16_word<1> {
  using type = std::uint16_t;
};

struct qkv_params {
  const bf16* qkv;     // [T, (nq + 2 * nk) * head_dim]
  const bf16* q_norm;  // [head_dim] or null
  const bf16* k_norm;  // [head_dim] or null
  const std::int32_t* positions;
  const float* inv_freq;  // [head_dim / 2]
  const std::int32_t* slots;
  bf16* q_out;    // [T, nq * head_dim]
  bf16* k_cache;  // [num_slots, nk * head_dim]
  bf16* v_cache;
  std::int64_t num_slots;
  float eps;
  int num_q_heads, num_kv_heads, head_dim;
};

// One block per token; warp w takes heads w, w + warps, ... (q heads, then k heads when the slot
// is valid): the head's RMS scale by the warp (NV-element vectors, the order of a per-head norm
// kernel), then lanes over the rotate_half pairs in RV-element vectors, reading qkv and writing
// the destination (never the same memory). Then every thread copies words of v.
template <int NV, int RV>
__global__ void qkv_rope_kv_write_kernel(qkv_params p) {
  __shared__ float cos_s[kMaxRopeHalf];
  __shared__ float sin_s[kMaxRopeHalf];
  const std::int64_t t = blockIdx.x;
  const int hd = p.head_dim, half = hd / 2, nq = p.num_q_heads, nk = p.num_kv_heads;
  const float pos = static_cast<float>(p.positions[t]);
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    rope_cos_sin(pos, p.inv_freq[i], cos_s[i], sin_s[i]);
  }
  __syncthreads();
  const std::int64_t slot = p.slots[t];
  const bool write_kv = slot >= 0 && slot < p.num_slots;
  const bf16* row = p.qkv + t * (nq + 2 * nk) * hd;
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int num_warps = static_cast<int>(blockDim.x >> 5);
  const int heads = nq + (write_kv ? nk : 0);
  for (int h = static_cast<int>(threadIdx.x >> 5); h < heads; h += num_warps) {
    const bool is_q = h < nq;
    const bf16* src = row + static_cast<std::int64_t>(h) * hd;  // k head h - nq follows the q heads
    const bf16* w = is_q ? p.q_norm : p.k_norm;
    bf16* dst = is_q ? p.q_out + (t * nq + h) * hd
                     : p.k_cache + (slot * nk + (h - nq)) * static_cast<std::int64_t>(hd);
    const float scale = w ? head_rms_scale<NV>(src, hd, p.eps, lane) : 1.0f;
    for (int i0 = lane * RV; i0 < half; i0 += 32 * RV) {
      float x1[RV], x2[RV];
      load_bf16<RV>(src + i0, x1);
      load_bf16<RV>(src + half + i0, x2);
      if (w) {
        float w1[RV], w2[RV];
        load_bf16<RV>(w + i0, w1);
        load_bf16<RV>(w + half + i0, w2);
#pragma unroll
        for (int e = 0; e < RV; ++e) {
          x1[e] = round_bf16(w1[e] * (x1[e] * scale));
          x2[e] = round_bf16(w2[e] * (x2[e] * scale));
        }
      }
#pragma unroll
      for (int e = 0; e < RV; ++e) rope_rotate(x1[e], x2[e], cos_s[i0 + e], sin_s[i0 + e]);
      store_bf16<RV>(dst + i0, x1);
      store_bf16<RV>(dst + half + i0, x2);
    }
  }
  if (!write_kv) return;
  using W = typename bf16_word<RV>::type;
  const auto* v_src = reinterpret_cast<const W*>(row + static_cast<std::int64_t>(nq + nk) * hd);
  auto* v_dst = reinterpret_cast<W*>(p.v_cache + slot * nk * static_cast<std::int64_t>(hd));
  const int words = nk * hd / RV;
  for (int j = threadIdx.x; j < words; j += blockDim.x) v_dst[j] = v_src[j];
}

template <int NV, int RV>
void launch(dim3 grid, dim3 block, const qkv_params& p, cudaStream_t stream) {
  launch_kernel(qkv_rope_kv_write_kernel<NV, RV>, grid, block, 0, stream, p);
}

}  // namespace

cudaError_t launch_qkv_rope_kv_write(const void* qkv, std::int64_t num_tokens,
                                     std::int32_t num_q_heads, std::int32_t num_kv_heads,
                                     std::int32_t head_dim, const void* q_norm, const void* k_norm,
                                     float eps, const std::int32_t* positions,
                                     const float* inv_freq, const std::int32_t* slot_mapping,
                                     const kv_cache_view& cache, void* q_out, cudaStream_t stream) {
  if (num_tokens < 0 || num_tokens > kMaxGridX || num_q_heads < 0 || num_kv_heads < 0 ||
      head_dim <= 0 || head_dim % 2 != 0 || head_dim / 2 > kMaxRopeHalf) {
    return cudaErrorInvalidValue;
  }
  if (num_kv_heads > 0 &&
      (cache.type != dtype::bf16 || cache.num_kv_heads != num_kv_heads ||
       cache.head_dim != head_dim || cache.num_blocks < 0 || cache.block_size < 0)) {
    return cudaErrorInvalidValue;
  }
  if (num_tokens == 0 || num_q_heads + num_kv_heads == 0) return cudaSuccess;
  if (!qkv || !positions || !inv_freq || !slot_mapping || (num_q_heads > 0 && !q_out) ||
      (num_kv_heads > 0 && (!cache.k || !cache.v))) {
    return cudaErrorInvalidValue;
  }
  qkv_params p;
  p.qkv = static_cast<const bf16*>(qkv);
  p.q_norm = static_cast<const bf16*>(q_norm);
  p.k_norm = static_cast<const bf16*>(k_norm);
  p.positions = positions;
  p.inv_freq = inv_freq;
  p.slots = slot_mapping;
  p.q_out = static_cast<bf16*>(q_out);
  p.k_cache = static_cast<bf16*>(cache.k);
  p.v_cache = static_cast<bf16*>(cache.v);
  p.num_slots =
      num_kv_heads > 0 ? static_cast<std::int64_t>(cache.num_blocks) * cache.block_size : 0;
  p.eps = eps;
  p.num_q_heads = num_q_heads;
  p.num_kv_heads = num_kv_heads;
  p.head_dim = head_dim;
  // Every head starts at a multiple of head_dim from its base, so head_dim (for the norm's
  // reduction: the vectors a per-head norm kernel reads) and half (for the pairs) and the bases
  // decide the widths; rv <= nv always (half's conditions imply head_dim's).
  const int nv = bf16_vec_width(head_dim, qkv, q_norm, k_norm);
  const int rv = bf16_vec_width(head_dim / 2, qkv, q_norm, k_norm, q_out, cache.k, cache.v);
  const int heads = num_q_heads + num_kv_heads;
  const dim3 grid(static_cast<unsigned>(num_tokens));
  const dim3 block(32u * static_cast<unsigned>(heads < kMaxWarps ? heads : kMaxWarps));
  if (nv == 8 && rv == 8) {
    launch<8, 8>(grid, block, p, stream);
  } else if (nv == 8 && rv == 2) {
    launch<8, 2>(grid, block, p, stream);
  } else if (nv == 8) {
    launch<8, 1>(grid, block, p, stream);
  } else if (nv == 2 && rv == 2) {
    launch<2, 2>(grid, block, p, stream);
  } else if (nv == 2) {
    launch<2, 1>(grid, block, p, stream);
  } else {
    launch<1, 1>(grid, block, p, stream);
  }
  return cudaGetLastError();
}

}  // namespace courier::gpu::cuda
