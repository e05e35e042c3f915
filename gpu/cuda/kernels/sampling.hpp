#pragma once
// The CUDA sampler: one token per row of f32 logits, with its raw logprob and the top-N raw
// logprobs, by the contract at the top of gpu/sim/sim_sampling.cpp (the reference it is tested
// against). Plan on the host from the batch, then launch; the launch is capturable in a graph.
//
//   std::optional<sampling_plan> plan = plan_sampling(R, V, batch);
//   // workspace: plan->workspace_bytes; out_dev: plan->output_bytes (R sampled_row_dev)
//   cudaError_t e = launch_sampling(*plan, logits, rows_dev, penalties_dev, bias_dev, workspace,
//                                   out_dev, tokens_out, s);
//   // download out_dev, then to_sample_results(...)
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "gpu/cuda/kernels/sampling_math.hpp"
#include "gpu/sampling.hpp"

namespace courier::gpu::cuda {

enum class sampled_row_status : std::int32_t {
  ok = 0,
  plan_mismatch = 1,  // more rows with penalties or bias than the plan made working copies for
  bad_penalties = 2,  // the row's penalty slice lies outside the plan's penalty tokens, or its
                      // list outside the plan's lists (or its length outside the list)
  bad_bias = 3,       // the row's bias slice lies outside the plan's bias tokens, or its list
                      // outside the plan's lists
  bad_mask = 4,       // the row's mask lies outside the plan's mask words
  bad_ends = 5,       // the row's end-token slice lies outside the plan's end tokens
};

// Whether the row bans its end tokens at this draw (min_tokens not reached).
COURIER_SAMPLING_HD inline bool bans_end_tokens(const sampling_row& row) {
  return row.end_count > 0 && row.draw_index < row.end_until;
}

// Whether a row gets a working copy of its logits (biased, masked, ends banned, then
// penalised): the plan and the kernel count the same rows.
COURIER_SAMPLING_HD inline bool needs_working_copy(const sampling_row& row) {
  return row.penalty_count > 0 || row.penalty_list >= 0 || row.bias_count > 0 ||
         row.mask_begin >= 0 || bans_end_tokens(row);
}

// One row's answer as the kernel writes it (device memory, then downloaded as is).
struct sampled_row_dev {
  std::uint32_t token;
  float logprob;         // raw log-probability of `token`
  std::int32_t num_top;  // entries of top_* set: min(num_logprobs, vocab)
  sampled_row_status status;
  std::uint32_t top_ids[max_logprobs];  // best first, ties to the lower id
  float top_logprobs[max_logprobs];
};

// What one launch does and needs, from the shapes and the batch. Invariants: workspace_bytes
// covers the working copies; num_work_rows is the number of rows that needs_working_copy.
struct sampling_plan {
  std::int64_t num_rows = 0;
  std::int64_t vocab = 0;
  std::int32_t id_bits = 0;             // bits that hold an id in [0, vocab)
  std::int64_t num_penalty_tokens = 0;  // batch.penalty_tokens.size()
  std::int64_t num_bias_tokens = 0;     // batch.bias_tokens.size()
  std::int64_t num_mask_words = 0;      // batch.mask_words.size()
  std::int64_t num_end_tokens = 0;      // batch.end_tokens.size()
  // batch.penalty_* lists (device memory, read in place; null and 0 when none).
  const penalty_token* penalty_lists = nullptr;
  const std::int32_t* penalty_list_lens = nullptr;
  std::int32_t penalty_list_stride = 0;
  std::int32_t num_penalty_lists = 0;
  const bias_token* bias_lists = nullptr;  // batch.bias_lists: [num_bias_lists, max_bias_tokens]
  std::int32_t num_bias_lists = 0;
  std::int32_t num_work_rows = 0;       // rows that get a biased, penalised copy of their logits
  std::size_t work_bytes = 0;           // the copies: [num_work_rows, vocab] f32
  std::size_t workspace_bytes = 0;      // what launch_sampling's `workspace` must hold
  std::size_t output_bytes = 0;         // num_rows sampled_row_dev at `out_dev`
};

// nullopt unless num_rows == batch.rows.size() <= 2^31 - 1 and 1 <= vocab <= 2^31 - 1, and a
// batch whose rows use penalty or bias lists has them (pointers, a positive stride, the row's
// list below their number, no slice besides; a bias list's count at most max_bias_tokens), and
// each row's end tokens are at most max_end_tokens.
[[nodiscard]] std::optional<sampling_plan> plan_sampling(std::int64_t num_rows, std::int64_t vocab,
                                                         const sampling_batch& batch);

// The most memory any launch within these limits needs, for a workspace reserved once.
struct sampling_bound {
  std::size_t rows_bytes = 0;       // the batch's sampling_row array
  std::size_t penalties_bytes = 0;  // its penalty tokens
  std::size_t bias_bytes = 0;       // its bias tokens
  std::size_t mask_bytes = 0;       // its masks: one per row
  std::size_t end_bytes = 0;        // its end tokens: at most max_end_tokens per sequence
  std::size_t workspace_bytes = 0;  // launch_sampling's workspace
  std::size_t output_bytes = 0;     // sampled_row_dev per row
};
// max_rows: logits rows per launch; max_seqs: sequences per launch, each with at most one penalty
// slice (a row with penalties samples one position) and one bias slice of at most
// max_bias_tokens (shared by its positions); max_context: tokens a row has seen (prompt +
// output), which bounds its distinct penalty tokens. Any row may be biased, so the working
// copies are bounded by max_rows.
[[nodiscard]] sampling_bound sampling_workspace_bound(std::int64_t max_rows, std::int64_t max_seqs,
                                                      std::int64_t max_context, std::int64_t vocab);

// Samples every row: one CTA per row. All pointers are device memory:
//   logits        [num_rows, vocab] f32, row-major (borrowed for the launch)
//   rows_dev      [num_rows] the batch's rows, as planned
//   penalties_dev [num_penalty_tokens] (may be null when there are none)
//   bias_dev      [num_bias_tokens] (may be null when there are none)
//   workspace     workspace_bytes, 256-byte aligned (may be null when that is 0)
//   out_dev       [num_rows]
//   tokens_out    [num_rows] int32, each row's token alone, 0 for no_allowed_token (may be null)
//   mask_dev      [num_mask_words] (may be null when there are none)
//   ends_dev      [num_end_tokens] (may be null when there are none)
// Errors: cudaErrorInvalidValue for a missing pointer; else the launch's own.
[[nodiscard]] cudaError_t launch_sampling(const sampling_plan& plan, const float* logits,
                                          const sampling_row* rows_dev,
                                          const penalty_token* penalties_dev,
                                          const bias_token* bias_dev, void* workspace,
                                          sampled_row_dev* out_dev, std::int32_t* tokens_out,
                                          cudaStream_t stream,
                                          const std::uint32_t* mask_dev = nullptr,
                                          const std::uint32_t* ends_dev = nullptr);

// The downloaded rows as the device interface returns them; nullopt when a row's status is not ok.
[[nodiscard]] std::optional<std::vector<sample_result>> to_sample_results(
    const sampled_row_dev* rows, std::size_t num_rows);

}  // namespace courier::gpu::cuda
