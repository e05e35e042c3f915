#pragma once
// Internal to the CUDA sampler (sampling.cu): find_first_reaching, the one search behind top-k,
// top-p, the draw and the top-N logprobs (the radix descent of sampling.cu's step 2), with its
// targets and the final gather and sort.
#include <cstdint>

#include "gpu/cuda/kernels/sampling_block.cuh"
#include "gpu/cuda/kernels/sampling_token.cuh"

namespace courier::gpu::cuda::detail {

enum class target_kind { fixed, top_p, draw };

struct target_spec {
  target_kind kind;
  u64 fixed;    // fixed: the target itself
  float top_p;  // top_p: target ceil(top_p * base mass), at least 1
  u64 u53;      // draw: target floor(u53 * kept mass / 2^53) + 1
};

// ceil(total * frac) for frac in [0, 1), exactly; 0 for frac <= 0 or NaN.
__device__ inline u64 ceil_fraction(u64 total, float frac) {
  if (!(frac > 0.0f)) return 0;
  const u32 bits = __float_as_uint(frac);
  const u32 exponent = bits >> 23;
  const u64 mantissa = (bits & 0x7FFFFFu) | (exponent ? 0x800000u : 0u);
  const int shift = exponent ? 150 - static_cast<int>(exponent) : 149;  // frac = mantissa / 2^shift
  const u64 hi = __umul64hi(mantissa, total);
  const u64 lo = mantissa * total;
  if (shift >= 128) return (hi | lo) ? 1 : 0;
  if (shift >= 64) {
    const int s = shift - 64;
    const u64 rest = s ? (hi & ((u64{1} << s) - 1)) : 0;
    return (hi >> s) + ((rest | lo) ? 1 : 0);
  }
  const u64 rest = lo & ((u64{1} << shift) - 1);  // shift >= 24: frac < 1
  return ((lo >> shift) | (hi << (64 - shift))) + (rest ? 1 : 0);
}

__device__ inline u64 make_target(const target_spec& t, u64 base_total, u64 kept_total) {
  switch (t.kind) {
    case target_kind::fixed:
      return t.fixed;
    case target_kind::top_p: {
      const u64 target = ceil_fraction(base_total, t.top_p);
      return target > 0 ? target : 1;
    }
    case target_kind::draw: {
      const u64 hi = __umul64hi(t.u53, kept_total);
      const u64 lo = t.u53 * kept_total;
      return ((lo >> 53) | (hi << 11)) + 1;
    }
  }
  return 0;
}

// Sorts key[0, n) descending, carrying mass; n a power of two <= 2 * block_threads.
__device__ inline void bitonic_sort_descending(u64* key, u64* mass, u32 n) {
  const u32 t = threadIdx.x;
  for (u32 k = 2; k <= n; k *= 2) {
    for (u32 j = k / 2; j > 0; j /= 2) {
      if (t < n / 2) {
        const u32 i = (t / j) * 2 * j + t % j;
        const u32 l = i + j;
        const bool descending = (i & k) == 0;
        if ((key[i] < key[l]) == descending) {
          const u64 k_i = key[i];
          key[i] = key[l];
          key[l] = k_i;
          const u64 m_i = mass[i];
          mass[i] = mass[l];
          mass[l] = m_i;
        }
      }
      __syncthreads();
    }
  }
}

// Gathers the kept tokens under `prefix` (at most gather_capacity of them) into gather_key and
// gather_mass, sorted by composite descending. Returns how many.
__device__ inline u32 gather_sorted(const token_set& s, u64 prefix, int prefix_shift,
                                    block_storage& sm) {
  if (threadIdx.x == 0) sm.gather_count = 0;
  __syncthreads();
  for_each_logit(s.keys, nullptr, s.vocab, [&](u32 id, float key) {
    weighed w;
    if (!weigh(s, id, key, prefix, prefix_shift, w) || !w.kept) return;
    const u32 at = atomicAdd(&sm.gather_count, 1u);
    if (at < gather_capacity) {
      sm.gather_key[at] = w.comp;
      sm.gather_mass[at] = w.mass;
    }
  });
  __syncthreads();
  const u32 n = sm.gather_count < gather_capacity ? sm.gather_count : gather_capacity;
  u32 padded = 2;
  while (padded < n) padded *= 2;
  for (u32 i = n + threadIdx.x; i < padded; i += block_threads) {
    sm.gather_key[i] = 0;  // below every token's composite, and weightless
    sm.gather_mass[i] = 0;
  }
  __syncthreads();
  bitonic_sort_descending(sm.gather_key, sm.gather_mass, padded);
  return n;
}

// The composite of the first kept token, by composite descending, whose cumulative mass (its own
// included) reaches the target that `t` makes from the totals; 0 when that target is beyond the
// kept total. Block-uniform: every thread calls it and gets the answer.
__device__ inline u64 find_first_reaching(const token_set& s, const target_spec& t,
                                          block_storage& sm) {
  int prefix_shift = 32 + s.id_bits;  // <= 63: every composite is below 2^prefix_shift
  u64 prefix = 0;
  u64 target = 0;
  for (bool first = true;; first = false) {
    const int shift = prefix_shift > digit_bits ? prefix_shift - digit_bits : 0;
    const u64 digit_mask = (u64{1} << (prefix_shift - shift)) - 1;
    for (int b = threadIdx.x; b < num_buckets; b += block_threads) {
      sm.count[b] = 0;
      sm.mass[b] = 0;
    }
    __syncthreads();
    u64 base_sum = 0;
    u64 kept_sum = 0;
    for_each_logit(s.keys, nullptr, s.vocab, [&](u32 id, float key) {
      weighed w;
      if (!weigh(s, id, key, prefix, prefix_shift, w)) return;
      base_sum += w.mass;
      if (!w.kept) return;
      kept_sum += w.mass;
      const u32 d = static_cast<u32>((w.comp >> shift) & digit_mask);
      atomicAdd(&sm.count[d], 1u);
      if (s.by_mass) atomicAdd(&sm.mass[d], w.mass);
    });
    __syncthreads();
    if (first) {
      const u64 base_total = block_reduce(base_sum, sum_op{}, sm.warp_u64);
      const u64 kept_total = block_reduce(kept_sum, sum_op{}, sm.warp_u64);
      target = make_target(t, base_total, kept_total);
      if (target == 0 || target > kept_total) return 0;
    }
    // The bucket where the cumulative mass, highest digit first, reaches the target.
    const u32 d0 = num_buckets - 1 - 2 * threadIdx.x;
    const u32 d1 = d0 - 1;
    const u64 m0 = s.by_mass ? sm.mass[d0] : sm.count[d0];
    const u64 m1 = s.by_mass ? sm.mass[d1] : sm.count[d1];
    if (threadIdx.x == 0) {  // overwritten below unless a bug left the target unreached
      sm.pick_digit = 0;
      sm.pick_before = 0;
    }
    u64 total;
    const u64 before = block_exclusive_sum(m0 + m1, sm.warp_u64, &total);
    if (before < target && target <= before + m0) {
      sm.pick_digit = d0;
      sm.pick_before = before;
    } else if (before + m0 < target && target <= before + m0 + m1) {
      sm.pick_digit = d1;
      sm.pick_before = before + m0;
    }
    __syncthreads();
    const u32 d = sm.pick_digit;
    target -= sm.pick_before;
    prefix = (prefix << (prefix_shift - shift)) | d;
    prefix_shift = shift;
    const u32 in_bucket = sm.count[d];
    __syncthreads();  // everyone has read the histograms before they are cleared or reused
    if (in_bucket > gather_capacity && shift > 0) continue;

    const u32 n = gather_sorted(s, prefix, prefix_shift, sm);
    const u32 i0 = 2 * threadIdx.x;
    const u64 w0 = i0 < n ? sm.gather_mass[i0] : 0;
    const u64 w1 = i0 + 1 < n ? sm.gather_mass[i0 + 1] : 0;
    if (threadIdx.x == 0) sm.result = n > 0 ? sm.gather_key[n - 1] : 0;  // only by a bug
    const u64 w_before = block_exclusive_sum(w0 + w1, sm.warp_u64, &total);
    if (w_before < target && target <= w_before + w0) {
      sm.result = sm.gather_key[i0];
    } else if (w_before + w0 < target && target <= w_before + w0 + w1) {
      sm.result = sm.gather_key[i0 + 1];
    }
    __syncthreads();
    const u64 result = sm.result;
    __syncthreads();
    return result;
  }
}

}  // namespace courier::gpu::cuda::detail
