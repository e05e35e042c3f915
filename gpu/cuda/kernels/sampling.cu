// The CUDA sampler (sampling.hpp): one CTA of 512 threads per row, no full sort of the vocabulary.
//
// Per row:
// 1. One pass over the raw logits: the row's max and logsumexp (online, summed in double), its
//    argmax, its live tokens; rows with penalties also write a working copy, which then gets the
//    penalties and one more pass (argmax and live count of the penalised logits).
// 2. Greedy rows stop there. Sampling rows search the order "penalised logit descending, ties to
//    the lower id" with one primitive, find_first_reaching: the first token whose cumulative
//    weight reaches a target. Tokens are keyed by a composite (ordered float bits, then the
//    complemented id), so the order is the composite's, descending, and distinct. The search is a
//    radix descent, 10 bits a pass: a histogram of the next digit (count and weight per bucket)
//    over the tokens still in play, the bucket where the cumulative weight reaches the target, and
//    so on down, until the bucket holds at most 1024 tokens; those are gathered into shared memory,
//    sorted (bitonic) and scanned. Usually two histogram passes and one gather pass.
//    - top-k: weight 1 over the live tokens, target k: the k-th token (boundary ties to lower ids).
//    - weights: exp((key - best) / temperature) by the sim's own float exp, so the same bits;
//      tokens whose weight is 0 drop out, min-p drops weight < min(min_p, 1).
//    - top-p: target ceil(top_p * mass before min-p): the last token kept.
//    - the draw: target floor(u * kept mass) + 1, u = sampling_uniform_bits / 2^53.
//    Masses are the weights in fixed point, rint(weight * 2^S), summed in 64-bit integers with
//    S = 63 - ceil(log2(candidates)): exact and order-free, so the CUDA result is deterministic
//    whatever the atomics' order, and within the contract's rounding of the sim's double sums
//    (the quantum is 2^-S of the best token's weight: 2^-45 at a 152k vocabulary).
// 3. Top-N raw logprobs: the same search with weight 1 over the raw row, target N, then a gather.
//
// Only shared memory, __syncthreads and warp shuffles: no cooperative groups, no global atomics.
#include "gpu/cuda/kernels/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "gpu/cuda/kernels/sampling_math.hpp"

namespace courier::gpu::cuda {
namespace {

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

// One launch's memory and shapes.
struct sampling_view {
  const float* logits;             // [num_rows, vocab] f32
  const sampling_row* rows;        // [num_rows]
  const penalty_token* penalties;  // [num_penalty_tokens]
  float* work;                     // [num_work_rows, vocab]: penalised copies
  sampled_row_dev* out;            // [num_rows]
  std::int64_t num_penalty_tokens;
  u32 vocab;
  int id_bits;  // composite = ordered key << id_bits | (2^id_bits - 1 - id)
  int num_work_rows;
};

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
__device__ u64 block_exclusive_sum(u64 v, u64* warp_scratch, u64* total) {
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

__device__ __forceinline__ u64 composite(float key, u32 id, int id_bits) {
  const u64 id_mask = (u64{1} << id_bits) - 1;
  return (static_cast<u64>(sampling_ordered_key(key)) << id_bits) | (id_mask - id);
}

__device__ __forceinline__ u32 id_of(u64 comp, int id_bits) {
  const u64 id_mask = (u64{1} << id_bits) - 1;
  return static_cast<u32>(id_mask - (comp & id_mask));
}

__device__ float penalised(float logit, const penalty_token& p, const sampling_row& row) {
  if (row.repetition_penalty != 1.0f && (p.in_prompt || p.output_count > 0)) {
    logit = logit > 0.0f ? sampling_div(logit, row.repetition_penalty)
                         : sampling_mul(logit, row.repetition_penalty);
  }
  logit =
      sampling_sub(logit, sampling_mul(row.frequency_penalty, static_cast<float>(p.output_count)));
  if (p.output_count > 0) logit = sampling_sub(logit, row.presence_penalty);
  return logit;
}

__device__ float raw_logprob(float logit, double log_sum_exp) {
  if (!(logit > neg_inf)) return neg_inf;  // also when the whole row is masked
  return static_cast<float>(static_cast<double>(logit) - log_sum_exp);
}

// The tokens a search runs over and what each weighs. A token is in the base set when it is live
// (or !live_only), its composite >= min_comp and, by mass, its weight > 0; it is kept when also
// its weight >= min_weight and its composite >= kept_min_comp. Searches run over the kept set;
// the base set's total mass is top-p's reference.
struct token_set {
  const float* keys;  // [vocab]
  u32 vocab;
  int id_bits;
  bool live_only;
  bool by_mass;  // mass = rint(exp((key - best) / temperature) * scale); else 1
  u64 min_comp;
  u64 kept_min_comp;
  float best;
  float temperature;
  double scale;       // 2^S
  double min_weight;  // min-p's floor; 0 keeps all
};

struct weighed {
  u64 comp;
  u64 mass;
  bool kept;
};

// Whether the token is in the base set and its composite has `prefix` above bit prefix_shift.
__device__ __forceinline__ bool weigh(const token_set& s, u32 id, float key, u64 prefix,
                                      int prefix_shift, weighed& w) {
  w.comp = composite(key, id, s.id_bits);
  if ((w.comp >> prefix_shift) != prefix) return false;
  if (s.live_only && !(key > neg_inf)) return false;
  if (w.comp < s.min_comp) return false;
  w.mass = 1;
  w.kept = w.comp >= s.kept_min_comp;
  if (s.by_mass) {
    const float weight = exp_nonpositive(sampling_div(sampling_sub(key, s.best), s.temperature));
    if (!(weight > 0.0f)) return false;
    w.mass = __double2ull_rn(static_cast<double>(weight) * s.scale);
    w.kept = w.kept && static_cast<double>(weight) >= s.min_weight;
  }
  return true;
}

enum class target_kind { fixed, top_p, draw };

struct target_spec {
  target_kind kind;
  u64 fixed;    // fixed: the target itself
  float top_p;  // top_p: target ceil(top_p * base mass), at least 1
  u64 u53;      // draw: target floor(u53 * kept mass / 2^53) + 1
};

// ceil(total * frac) for frac in [0, 1), exactly; 0 for frac <= 0 or NaN.
__device__ u64 ceil_fraction(u64 total, float frac) {
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

__device__ u64 make_target(const target_spec& t, u64 base_total, u64 kept_total) {
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
__device__ void bitonic_sort_descending(u64* key, u64* mass, u32 n) {
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
__device__ u32 gather_sorted(const token_set& s, u64 prefix, int prefix_shift, block_storage& sm) {
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
__device__ u64 find_first_reaching(const token_set& s, const target_spec& t, block_storage& sm) {
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

__device__ int ceil_log2(u32 n) {
  return n <= 1 ? 0 : 32 - __clz(n - 1);
}

__global__ void __launch_bounds__(block_threads) sample_rows_kernel(sampling_view v) {
  __shared__ block_storage sm;
  const std::int64_t r = blockIdx.x;
  const sampling_row row = v.rows[r];
  const float* raw = v.logits + r * v.vocab;
  const int id_bits = v.id_bits;
  sampled_row_status status = sampled_row_status::ok;

  // This row's working copy, when it has penalties: the copies go to those rows in row order.
  float* work = nullptr;
  if (row.penalty_count > 0) {
    if (row.penalty_begin < 0 ||
        std::int64_t{row.penalty_begin} + row.penalty_count > v.num_penalty_tokens) {
      status = sampled_row_status::bad_penalties;
    } else {
      u32 earlier = 0;
      for (std::int64_t j = threadIdx.x; j < r; j += block_threads) {
        earlier += v.rows[j].penalty_count > 0 ? 1u : 0u;
      }
      earlier = block_reduce(earlier, sum_op{}, sm.warp_u32);
      if (earlier < static_cast<u32>(v.num_work_rows)) {
        work = v.work + static_cast<std::int64_t>(earlier) * v.vocab;
      } else {
        status = sampled_row_status::plan_mismatch;
      }
    }
  }

  // Pass 1, over the raw row: logsumexp online (each thread's sum relative to its own running
  // max, in double), argmax and live count; the working copy on the way.
  float running_max = neg_inf;
  double running_sum = 0.0;
  u64 best = 0;
  u32 live = 0;
  for_each_logit(raw, work, v.vocab, [&](u32 id, float x) {
    const u64 c = composite(x, id, id_bits);
    best = c > best ? c : best;
    live += x > neg_inf ? 1u : 0u;
    if (x > running_max) {  // NaN never
      running_sum *= exp(static_cast<double>(running_max) - static_cast<double>(x));
      running_max = x;
    }
    running_sum += exp_nonpositive(sampling_sub(x, running_max));
  });
  const float raw_max = block_reduce(running_max, max_op{}, sm.warp_f32);
  const double scaled_sum =
      raw_max > neg_inf
          ? running_sum * exp(static_cast<double>(running_max) - static_cast<double>(raw_max))
          : 0.0;
  const double row_sum = block_reduce(scaled_sum, sum_op{}, sm.warp_f64);
  const double log_sum_exp = raw_max > neg_inf ? static_cast<double>(raw_max) + log(row_sum)
                                               : static_cast<double>(neg_inf);
  best = block_reduce(best, max_op{}, sm.warp_u64);
  live = block_reduce(live, sum_op{}, sm.warp_u32);

  // Penalties on the working copy (the block_reduce barriers ordered the copy's stores), then
  // the penalised row's argmax and live count.
  const float* keys = raw;
  if (work) {
    for (std::int32_t j = threadIdx.x; j < row.penalty_count; j += block_threads) {
      const penalty_token p = v.penalties[row.penalty_begin + j];
      if (p.token < v.vocab) work[p.token] = penalised(raw[p.token], p, row);
    }
    __syncthreads();
    keys = work;
    best = 0;
    live = 0;
    for_each_logit(keys, nullptr, v.vocab, [&](u32 id, float x) {
      const u64 c = composite(x, id, id_bits);
      best = c > best ? c : best;
      live += x > neg_inf ? 1u : 0u;
    });
    best = block_reduce(best, max_op{}, sm.warp_u64);
    live = block_reduce(live, sum_op{}, sm.warp_u32);
  }

  // Greedy: the argmax, ties to the lowest id; id 0 when nothing is live, as for the sim.
  u32 token = id_of(best, id_bits);
  if (row.temperature > 0.0f && live > 0) {
    token_set set{};
    set.keys = keys;
    set.vocab = v.vocab;
    set.id_bits = id_bits;
    set.live_only = true;
    u32 num_candidates = live;
    if (row.top_k > 0 && static_cast<u32>(row.top_k) < live) {
      target_spec k{target_kind::fixed, static_cast<u64>(row.top_k), 0.0f, 0};
      set.min_comp = find_first_reaching(set, k, sm);
      num_candidates = static_cast<u32>(row.top_k);
    }
    set.by_mass = true;
    set.best = keys[token];
    set.temperature = row.temperature;
    set.scale = ldexp(1.0, 63 - ceil_log2(num_candidates));  // total mass <= 2^63
    set.min_weight = row.min_p > 0.0f ? fmin(static_cast<double>(row.min_p), 1.0) : 0.0;
    if (row.top_p < 1.0f) {
      const target_spec p{target_kind::top_p, 0, row.top_p, 0};
      set.kept_min_comp = find_first_reaching(set, p, sm);
    }
    const target_spec draw{target_kind::draw, 0, 0.0f,
                           sampling_uniform_bits(row.seed, row.draw_index)};
    const u64 drawn = find_first_reaching(set, draw, sm);
    if (drawn != 0) token = id_of(drawn, id_bits);
  }

  // Top-N raw logprobs: weight 1 over the whole raw row (NaN as -inf), target N.
  const std::int32_t wanted = row.num_logprobs < 0              ? 0
                              : row.num_logprobs > max_logprobs ? max_logprobs
                                                                : row.num_logprobs;
  const u32 num_top = static_cast<u32>(wanted) < v.vocab ? static_cast<u32>(wanted) : v.vocab;
  u32 num_gathered = 0;
  if (num_top > 0) {
    token_set set{};
    set.keys = raw;
    set.vocab = v.vocab;
    set.id_bits = id_bits;
    if (num_top < v.vocab) {
      const target_spec n{target_kind::fixed, num_top, 0.0f, 0};
      set.kept_min_comp = find_first_reaching(set, n, sm);
    }
    num_gathered = gather_sorted(set, 0, 32 + id_bits, sm);  // num_top of them, best first
  }
  sampled_row_dev& out = v.out[r];
  if (threadIdx.x < static_cast<u32>(max_logprobs)) {  // unused entries zeroed: same bits each run
    u32 id = 0;
    float logprob = 0.0f;
    if (threadIdx.x < num_gathered) {
      id = id_of(sm.gather_key[threadIdx.x], id_bits);
      logprob = raw_logprob(raw[id], log_sum_exp);
    }
    out.top_ids[threadIdx.x] = id;
    out.top_logprobs[threadIdx.x] = logprob;
  }
  if (threadIdx.x == 0) {
    out.token = token;
    out.logprob = raw_logprob(raw[token], log_sum_exp);
    out.num_top = static_cast<std::int32_t>(num_top);
    out.status = status;
  }
}

}  // namespace

std::optional<sampling_plan> plan_sampling(std::int64_t num_rows, std::int64_t vocab,
                                           const sampling_batch& batch) {
  constexpr std::int64_t max_count = std::numeric_limits<std::int32_t>::max();
  if (num_rows < 0 || num_rows > max_count ||
      static_cast<std::size_t>(num_rows) != batch.rows.size()) {
    return std::nullopt;
  }
  if (vocab < 1 || vocab > max_count) return std::nullopt;
  sampling_plan plan;
  plan.num_rows = num_rows;
  plan.vocab = vocab;
  while ((std::int64_t{1} << plan.id_bits) < vocab) ++plan.id_bits;
  plan.num_penalty_tokens = static_cast<std::int64_t>(batch.penalty_tokens.size());
  plan.num_work_rows = static_cast<std::int32_t>(
      std::count_if(batch.rows.begin(), batch.rows.end(),
                    [](const sampling_row& row) { return row.penalty_count > 0; }));
  plan.work_bytes = static_cast<std::size_t>(plan.num_work_rows) * static_cast<std::size_t>(vocab) *
                    sizeof(float);
  plan.workspace_bytes = (plan.work_bytes + 255) / 256 * 256;
  plan.output_bytes = static_cast<std::size_t>(num_rows) * sizeof(sampled_row_dev);
  return plan;
}

sampling_bound sampling_workspace_bound(std::int64_t max_rows, std::int64_t max_penalized_rows,
                                      std::int64_t max_context, std::int64_t vocab) {
  const auto rows = static_cast<std::size_t>(std::max<std::int64_t>(max_rows, 0));
  const auto penalized = std::min(rows, static_cast<std::size_t>(std::max<std::int64_t>(
                                            max_penalized_rows, 0)));
  const auto v = static_cast<std::size_t>(std::max<std::int64_t>(vocab, 0));
  const auto distinct = std::min(v, static_cast<std::size_t>(std::max<std::int64_t>(max_context, 0)));
  sampling_bound b;
  b.rows_bytes = rows * sizeof(sampling_row);
  b.penalties_bytes = penalized * distinct * sizeof(penalty_token);
  b.workspace_bytes = (penalized * v * sizeof(float) + 255) / 256 * 256;
  b.output_bytes = rows * sizeof(sampled_row_dev);
  return b;
}

cudaError_t launch_sampling(const sampling_plan& plan, const float* logits,
                            const sampling_row* rows_dev, const penalty_token* penalties_dev,
                            void* workspace, sampled_row_dev* out_dev, cudaStream_t stream) {
  if (plan.num_rows == 0) return cudaSuccess;
  if (!logits || !rows_dev || !out_dev || (plan.num_penalty_tokens > 0 && !penalties_dev) ||
      (plan.workspace_bytes > 0 && !workspace)) {
    return cudaErrorInvalidValue;
  }
  sampling_view view{};
  view.logits = logits;
  view.rows = rows_dev;
  view.penalties = penalties_dev;
  view.work = static_cast<float*>(workspace);
  view.out = out_dev;
  view.num_penalty_tokens = plan.num_penalty_tokens;
  view.vocab = static_cast<u32>(plan.vocab);
  view.id_bits = plan.id_bits;
  view.num_work_rows = plan.num_work_rows;
  sample_rows_kernel<<<static_cast<unsigned>(plan.num_rows), block_threads, 0, stream>>>(view);
  return cudaGetLastError();
}

std::optional<std::vector<sample_result>> to_sample_results(const sampled_row_dev* rows,
                                                            std::size_t num_rows) {
  std::vector<sample_result> out(num_rows);
  for (std::size_t r = 0; r < num_rows; ++r) {
    const sampled_row_dev& d = rows[r];
    if (d.status != sampled_row_status::ok || d.num_top < 0 || d.num_top > max_logprobs) {
      return std::nullopt;
    }
    out[r].token = d.token;
    out[r].logprob = d.logprob;
    out[r].top_ids.assign(d.top_ids, d.top_ids + d.num_top);
    out[r].top_logprobs.assign(d.top_logprobs, d.top_logprobs + d.num_top);
  }
  return out;
}

}  // namespace courier::gpu::cuda
