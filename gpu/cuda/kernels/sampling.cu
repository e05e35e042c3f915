// The CUDA sampler (sampling.hpp): one CTA of 512 threads per row, no full sort of the vocabulary.
//
// Per row:
// 1. One pass over the raw logits: the row's max and logsumexp (online, summed in double), its
//    argmax, its live tokens; rows with a logit bias, a mask or penalties also write a working
//    copy, which then gets the bias (raw + bias, one thread per entry), the mask (-inf where the
//    row's mask bit is clear: the same as masking first, since -inf + bias is -inf), the
//    penalties (on the biased value) and one more pass (argmax and live count of the processed
//    logits). A masked row with nothing live answers no_allowed_token.
// 2. Greedy rows stop there, as do scoring rows (score_token: the token is given). Sampling rows search the order "processed logit descending, ties to
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
//
// Files: sampling_block.cuh (the CTA, block-wide primitives), sampling_token.cuh (a token's key,
// penalties and weight), sampling_search.cuh (find_first_reaching); this file has the kernel and
// its launch; sampling_host.cu the plan, the workspace bound and the results' conversion.
#include <cstdint>

#include "gpu/cuda/kernels/launch.cuh"
#include "gpu/cuda/kernels/sampling.hpp"
#include "gpu/cuda/kernels/sampling_block.cuh"
#include "gpu/cuda/kernels/sampling_math.hpp"
#include "gpu/cuda/kernels/sampling_search.cuh"
#include "gpu/cuda/kernels/sampling_token.cuh"

namespace courier::gpu::cuda {

using namespace detail;

namespace {

// One launch's memory and shapes.
struct sampling_view {
  const float* logits;             // [num_rows, vocab] f32
  const sampling_row* rows;        // [num_rows]
  const penalty_token* penalties;  // [num_penalty_tokens]
  const bias_token* bias;          // [num_bias_tokens]
  const std::uint32_t* mask;       // [num_mask_words]
  const std::uint32_t* ends;       // [num_end_tokens]
  float* work;                     // [num_work_rows, vocab]: biased, penalised copies
  sampled_row_dev* out;            // [num_rows]
  std::int32_t* tokens;            // [num_rows] or null: each row's token alone
  std::int64_t num_penalty_tokens;
  std::int64_t num_bias_tokens;
  std::int64_t num_mask_words;
  std::int64_t num_end_tokens;
  const penalty_token* penalty_lists;     // [num_penalty_lists, penalty_list_stride]
  const std::int32_t* penalty_list_lens;  // [num_penalty_lists]
  std::int32_t penalty_list_stride;
  std::int32_t num_penalty_lists;
  const bias_token* bias_lists;  // [num_bias_lists, max_bias_tokens]
  std::int32_t num_bias_lists;
  u32 vocab;
  int id_bits;  // composite = ordered key << id_bits | (2^id_bits - 1 - id)
  int num_work_rows;
};

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

  // This row's working copy, when it has a bias or penalties: the copies go to those rows in
  // row order.
  // Its penalties: a slice of the batch's tokens, or a list kept on the device (its length
  // read here: the step before may have appended to it).
  const penalty_token* penalties = v.penalties ? v.penalties + row.penalty_begin : nullptr;
  std::int32_t num_penalties = row.penalty_count;
  bool bad_list = false;
  if (row.penalty_list >= 0) {
    bad_list = row.penalty_list >= v.num_penalty_lists;
    if (!bad_list) {
      penalties = v.penalty_lists + std::int64_t{row.penalty_list} * v.penalty_list_stride;
      num_penalties = v.penalty_list_lens[row.penalty_list];
      bad_list = num_penalties < 0 || num_penalties > v.penalty_list_stride;
    }
  }
  // Its bias: a slice of the batch's tokens, or its list kept on the device.
  const bias_token* bias = v.bias ? v.bias + row.bias_begin : nullptr;
  const bool bad_bias_list = row.bias_list >= v.num_bias_lists;
  if (row.bias_list >= 0 && !bad_bias_list) {
    bias = v.bias_lists + std::int64_t{row.bias_list} * max_bias_tokens;
  }
  float* work = nullptr;
  if (needs_working_copy(row)) {
    if (bad_list || (row.penalty_count > 0 && (row.penalty_begin < 0 ||
                                              std::int64_t{row.penalty_begin} + row.penalty_count >
                                                  v.num_penalty_tokens))) {
      status = sampled_row_status::bad_penalties;
    } else if (row.bias_list >= 0 ? bad_bias_list || row.bias_count > max_bias_tokens
                                   : row.bias_count > 0 &&
                                         (row.bias_begin < 0 || std::int64_t{row.bias_begin} +
                                                                        row.bias_count >
                                                                    v.num_bias_tokens)) {
      status = sampled_row_status::bad_bias;
    } else if (row.mask_begin >= 0 &&
               row.mask_begin + (std::int64_t{v.vocab} + 31) / 32 > v.num_mask_words) {
      status = sampled_row_status::bad_mask;
    } else if (bans_end_tokens(row) &&
               (row.end_begin < 0 ||
                std::int64_t{row.end_begin} + row.end_count > v.num_end_tokens)) {
      status = sampled_row_status::bad_ends;
    } else {
      u32 earlier = 0;
      for (std::int64_t j = threadIdx.x; j < r; j += block_threads) {
        earlier += needs_working_copy(v.rows[j]) ? 1u : 0u;
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

  // The bias, then penalties on the working copy (the block_reduce barriers ordered the copy's
  // stores; tokens are distinct within each list, and a barrier separates the two), then the
  // processed row's argmax and live count.
  const float* keys = raw;
  if (work) {
    for (std::int32_t j = threadIdx.x; j < row.bias_count; j += block_threads) {
      const bias_token b = bias[j];
      if (b.token < v.vocab) work[b.token] = sampling_add(raw[b.token], b.bias);
    }
    __syncthreads();
    if (row.mask_begin >= 0) {
      const std::uint32_t* words = v.mask + row.mask_begin;
      for (u32 id = threadIdx.x; id < v.vocab; id += block_threads) {
        if (!((words[id / 32] >> (id % 32)) & 1u)) work[id] = neg_inf;
      }
      __syncthreads();
    }
    if (bans_end_tokens(row)) {  // min_tokens not reached (an end token twice: the same store)
      for (std::int32_t j = threadIdx.x; j < row.end_count; j += block_threads) {
        const u32 t = v.ends[row.end_begin + j];
        if (t < v.vocab) work[t] = neg_inf;
      }
      __syncthreads();
    }
    for (std::int32_t j = threadIdx.x; j < num_penalties; j += block_threads) {
      const penalty_token p = penalties[j];
      if (p.token < v.vocab) work[p.token] = penalised(work[p.token], p, row);
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

  // Greedy: the argmax, ties to the lowest id; id 0 when nothing is live, as for the sim. A
  // scoring row (the plan checked its token and that it has no working copy) draws nothing.
  const bool scoring = row.score_token >= 0;
  u32 token = scoring ? static_cast<u32>(row.score_token) : id_of(best, id_bits);
  if (!scoring && row.temperature > 0.0f && live > 0) {
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
    // A masked row whose chosen token is not live had nothing it may draw.
    const bool none = row.mask_begin >= 0 && work && !(keys[token] > neg_inf);
    out.token = none ? no_allowed_token : token;
    out.logprob = none ? neg_inf : raw_logprob(raw[token], log_sum_exp);
    out.num_top = static_cast<std::int32_t>(num_top);
    out.status = status;
    if (v.tokens) v.tokens[r] = none ? 0 : static_cast<std::int32_t>(token);
  }
}

}  // namespace

cudaError_t launch_sampling(const sampling_plan& plan, const float* logits,
                            const sampling_row* rows_dev, const penalty_token* penalties_dev,
                            const bias_token* bias_dev, void* workspace, sampled_row_dev* out_dev,
                            std::int32_t* tokens_out, cudaStream_t stream,
                            const std::uint32_t* mask_dev, const std::uint32_t* ends_dev) {
  if (plan.num_rows == 0) return cudaSuccess;
  if (!logits || !rows_dev || !out_dev || (plan.num_penalty_tokens > 0 && !penalties_dev) ||
      (plan.num_bias_tokens > 0 && !bias_dev) || (plan.num_mask_words > 0 && !mask_dev) ||
      (plan.num_end_tokens > 0 && !ends_dev) ||
      (plan.workspace_bytes > 0 && !workspace)) {
    return cudaErrorInvalidValue;
  }
  sampling_view view{};
  view.logits = logits;
  view.rows = rows_dev;
  view.penalties = penalties_dev;
  view.bias = bias_dev;
  view.mask = mask_dev;
  view.ends = ends_dev;
  view.work = static_cast<float*>(workspace);
  view.out = out_dev;
  view.tokens = tokens_out;
  view.num_penalty_tokens = plan.num_penalty_tokens;
  view.num_bias_tokens = plan.num_bias_tokens;
  view.num_mask_words = plan.num_mask_words;
  view.num_end_tokens = plan.num_end_tokens;
  view.penalty_lists = plan.penalty_lists;
  view.penalty_list_lens = plan.penalty_list_lens;
  view.penalty_list_stride = plan.penalty_list_stride;
  view.num_penalty_lists = plan.num_penalty_lists;
  view.bias_lists = plan.bias_lists;
  view.num_bias_lists = plan.num_bias_lists;
  view.vocab = static_cast<u32>(plan.vocab);
  view.id_bits = plan.id_bits;
  view.num_work_rows = plan.num_work_rows;
  launch_kernel(sample_rows_kernel, static_cast<unsigned>(plan.num_rows), block_threads, 0, stream,
                view);
  return cudaGetLastError();
}

}  // namespace courier::gpu::cuda
