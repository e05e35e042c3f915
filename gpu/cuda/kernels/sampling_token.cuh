#pragma once
// Internal to the CUDA sampler (sampling.cu): what one token is to the sampler: its composite
// key (the search order), its penalised logit, its raw logprob, and its weight in a search.
#include <cstdint>

#include "gpu/cuda/kernels/sampling.hpp"
#include "gpu/cuda/kernels/sampling_block.cuh"
#include "gpu/cuda/kernels/sampling_math.hpp"

namespace courier::gpu::cuda::detail {

__device__ __forceinline__ u64 composite(float key, u32 id, int id_bits) {
  const u64 id_mask = (u64{1} << id_bits) - 1;
  return (static_cast<u64>(sampling_ordered_key(key)) << id_bits) | (id_mask - id);
}

__device__ __forceinline__ u32 id_of(u64 comp, int id_bits) {
  const u64 id_mask = (u64{1} << id_bits) - 1;
  return static_cast<u32>(id_mask - (comp & id_mask));
}

__device__ inline float penalised(float logit, const penalty_token& p, const sampling_row& row) {
  if (row.repetition_penalty != 1.0f && (p.in_prompt || p.output_count > 0)) {
    logit = logit > 0.0f ? sampling_div(logit, row.repetition_penalty)
                         : sampling_mul(logit, row.repetition_penalty);
  }
  logit =
      sampling_sub(logit, sampling_mul(row.frequency_penalty, static_cast<float>(p.output_count)));
  if (p.output_count > 0) logit = sampling_sub(logit, row.presence_penalty);
  return logit;
}

__device__ inline float raw_logprob(float logit, double log_sum_exp) {
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

}  // namespace courier::gpu::cuda::detail
