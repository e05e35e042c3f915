// The CUDA sampler's host side (sampling.hpp): the plan, the workspace bound, and the downloaded
// rows' conversion to sample_result. No kernel here; the launch is in sampling.cu.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "gpu/cuda/kernels/sampling.hpp"

namespace courier::gpu::cuda {

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
  plan.num_bias_tokens = static_cast<std::int64_t>(batch.bias_tokens.size());
  plan.num_mask_words = static_cast<std::int64_t>(batch.mask_words.size());
  plan.num_end_tokens = static_cast<std::int64_t>(batch.end_tokens.size());
  plan.penalty_lists = batch.penalty_lists;
  plan.penalty_list_lens = batch.penalty_list_lens;
  plan.penalty_list_stride = batch.penalty_list_stride;
  plan.num_penalty_lists = batch.num_penalty_lists;
  plan.bias_lists = batch.bias_lists;
  plan.num_bias_lists = batch.num_bias_lists;
  for (const sampling_row& row : batch.rows) {
    if (row.bias_list >= 0 &&
        (row.bias_begin != 0 || row.bias_count < 0 || row.bias_count > max_bias_tokens ||
         row.bias_list >= batch.num_bias_lists || !batch.bias_lists)) {
      return std::nullopt;
    }
    if (row.penalty_list >= 0 &&
        (row.penalty_count != 0 || row.penalty_list >= batch.num_penalty_lists ||
         !batch.penalty_lists || !batch.penalty_list_lens || batch.penalty_list_stride < 1)) {
      return std::nullopt;
    }
    if (row.end_count < 0 || row.end_count > max_end_tokens) return std::nullopt;
    if (row.score_token >= 0 &&
        (row.score_token >= vocab || needs_working_copy(row) || row.end_count > 0)) {
      return std::nullopt;  // a scoring row scores a vocabulary token of the raw logits
    }
  }
  plan.num_work_rows = static_cast<std::int32_t>(
      std::count_if(batch.rows.begin(), batch.rows.end(), needs_working_copy));
  plan.work_bytes = static_cast<std::size_t>(plan.num_work_rows) * static_cast<std::size_t>(vocab) *
                    sizeof(float);
  plan.workspace_bytes = (plan.work_bytes + 255) / 256 * 256;
  plan.output_bytes = static_cast<std::size_t>(num_rows) * sizeof(sampled_row_dev);
  return plan;
}

sampling_bound sampling_workspace_bound(std::int64_t max_rows, std::int64_t max_seqs,
                                        std::int64_t max_context, std::int64_t vocab) {
  const auto rows = static_cast<std::size_t>(std::max<std::int64_t>(max_rows, 0));
  const auto seqs = std::min(rows, static_cast<std::size_t>(std::max<std::int64_t>(max_seqs, 0)));
  const auto v = static_cast<std::size_t>(std::max<std::int64_t>(vocab, 0));
  const auto distinct =
      std::min(v, static_cast<std::size_t>(std::max<std::int64_t>(max_context, 0)));
  sampling_bound b;
  b.rows_bytes = rows * sizeof(sampling_row);
  b.penalties_bytes = seqs * distinct * sizeof(penalty_token);
  b.bias_bytes = seqs * std::min(v, static_cast<std::size_t>(max_bias_tokens)) * sizeof(bias_token);
  b.mask_bytes = rows * static_cast<std::size_t>(mask_words_per_row(vocab)) * sizeof(std::uint32_t);
  b.end_bytes = seqs * static_cast<std::size_t>(max_end_tokens) * sizeof(std::uint32_t);
  b.workspace_bytes = (rows * v * sizeof(float) + 255) / 256 * 256;
  b.output_bytes = rows * sizeof(sampled_row_dev);
  return b;
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
