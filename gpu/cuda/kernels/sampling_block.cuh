#pragma once
// Internal to the CUDA sampler (sampling.cu): the CTA's shape and shared memory, and the
// block-wide primitives every pass is made of: reductions in a fixed order, an exclusive scan,
// and the walk over a row of logits.
#include <cstdint>

namespace courier::gpu::cuda::detail {

using u32 = std::uint32_t;
using u64 = unsigned long long;  // the type CUDA's 64-bit atomics and shuffles take

constexpr int block_threads = 512;
constexpr int warp_size = 32;
constexpr int num_warps = block_threads / warp_size;
constexpr int digit_bits = 10;
constexpr int num_buckets = 1 << digit_bits;        // two per thread
constexpr int gather_capacity = 2 * block_threads;  // one compare-exchange per thread per stage
constexpr unsigned full_mask = 0xFFFFFFFFu;
constexpr float neg_inf = -__builtin_huge_valf();

static_assert(num_buckets == 2 * block_threads, "the bucket scan gives each thread two buckets");

struct block_storage {
  u32 count[num_buckets];
  u64 mass[num_buckets];
  u64 gather_key[gather_capacity];  // composites, then sorted descending
  u64 gather_mass[gather_capacity];
  u64 warp_u64[num_warps];
  double warp_f64[num_warps];
  float warp_f32[num_warps];
  u32 warp_u32[num_warps];
  u32 gather_count;
  u32 pick_digit;
  u64 pick_before;
  u64 result;
};

struct sum_op {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};
struct max_op {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a > b ? a : b;
  }
};

__device__ __forceinline__ int lane_id() {
  return static_cast<int>(threadIdx.x) % warp_size;
}
__device__ __forceinline__ int warp_id() {
  return static_cast<int>(threadIdx.x) / warp_size;
}

// op over the block's values, in a fixed order (so a double sum is deterministic), to every
// thread. Starts and ends with a barrier's worth of ordering: callers may reuse `warp_scratch`.
template <class T, class Op>
__device__ T block_reduce(T v, Op op, T* warp_scratch) {
  for (int m = warp_size / 2; m > 0; m /= 2) v = op(v, __shfl_xor_sync(full_mask, v, m));
  if (lane_id() == 0) warp_scratch[warp_id()] = v;
  __syncthreads();
  T r = warp_scratch[0];
  for (int w = 1; w < num_warps; ++w) r = op(r, warp_scratch[w]);
  __syncthreads();
  return r;
}

// The sum of the values of the threads before this one; *total gets the block's sum.
__device__ inline u64 block_exclusive_sum(u64 v, u64* warp_scratch, u64* total) {
  u64 inclusive = v;
  for (int d = 1; d < warp_size; d *= 2) {
    const u64 other = __shfl_up_sync(full_mask, inclusive, d);
    if (lane_id() >= d) inclusive += other;
  }
  if (lane_id() == warp_size - 1) warp_scratch[warp_id()] = inclusive;
  __syncthreads();
  u64 before = 0;
  u64 all = 0;
  for (int w = 0; w < num_warps; ++w) {
    if (w < warp_id()) before += warp_scratch[w];
    all += warp_scratch[w];
  }
  __syncthreads();
  *total = all;
  return before + inclusive - v;
}

template <class F>
__device__ __forceinline__ void visit_vector(const float4& q, u32 j, float4* out, F& f) {
  if (out) out[j] = q;
  f(4 * j, q.x);
  f(4 * j + 1, q.y);
  f(4 * j + 2, q.z);
  f(4 * j + 3, q.w);
}

// f(id, logit) for every token of the row, each thread its own fixed subset in a fixed order;
// with `copy`, also copy[id] = logit. 16-byte accesses where both rows allow them, four loads in
// flight per thread before the first use (a pass is memory-bound).
template <class F>
__device__ void for_each_logit(const float* row, float* copy, u32 vocab, F&& f) {
  constexpr u32 loads_in_flight = 4;
  u32 tail = 0;
  const bool aligned = (reinterpret_cast<std::uintptr_t>(row) % 16 == 0) &&
                       (reinterpret_cast<std::uintptr_t>(copy) % 16 == 0);
  if (aligned) {
    const float4* in = reinterpret_cast<const float4*>(row);
    float4* out = reinterpret_cast<float4*>(copy);
    const u32 num_vectors = vocab / 4;
    u32 j = threadIdx.x;
    for (; j + (loads_in_flight - 1) * block_threads < num_vectors;
         j += loads_in_flight * block_threads) {
      float4 q[loads_in_flight];
#pragma unroll
      for (u32 k = 0; k < loads_in_flight; ++k) q[k] = in[j + k * block_threads];
#pragma unroll
      for (u32 k = 0; k < loads_in_flight; ++k) visit_vector(q[k], j + k * block_threads, out, f);
    }
    for (; j < num_vectors; j += block_threads) visit_vector(in[j], j, out, f);
    tail = num_vectors * 4;
  }
  for (u32 i = tail + threadIdx.x; i < vocab; i += block_threads) {
    const float x = row[i];
    if (copy) copy[i] = x;
    f(i, x);
  }
}

}  // namespace courier::gpu::cuda::detail
