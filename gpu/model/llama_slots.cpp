// The per-sequence state the model keeps on the device across launches (llama.hpp): each slot's
// next token, block table and penalty list, and the ops that read and write them in a step.
#include <algorithm>
#include <stdexcept>

#include "gpu/model/llama.hpp"
#include "gpu/model/llama_layer.hpp"

namespace courier::model {

void llama_model::feed_tokens(const std::int32_t* src_index, const std::int32_t* dst_index,
                              std::int32_t* ids, std::int32_t n) {
  if (n == 0) return;
  dev_.copy_tokens(static_cast<const std::int32_t*>(next_tokens_.data()), src_index, ids,
                   dst_index, n);
}

void llama_model::write_tables(const std::int32_t* values, const std::int32_t* iota,
                               const std::int32_t* places, std::int32_t n) {
  if (n == 0) return;
  dev_.copy_tokens(values, iota, static_cast<std::int32_t*>(tables_.data()), places, n);
}

void llama_model::keep_next_tokens(const std::int32_t* src_index, const std::int32_t* dst_index,
                                   std::int32_t n) {
  if (n == 0) return;
  dev_.copy_tokens(static_cast<const std::int32_t*>(ws_->sampled.data()), src_index,
                   static_cast<std::int32_t*>(next_tokens_.data()), dst_index, n);
}

void llama_model::write_penalty_lists(const forward_batch& batch) {
  auto* lists = static_cast<gpu::penalty_token*>(penalty_lists_.data());
  auto* lens = static_cast<std::int32_t*>(penalty_lens_.data());
  for (const forward_row& row : batch.rows) {
    if (!row.penalty_init) continue;
    const std::int32_t n = row.sampling.penalty_count;  // validated: <= penalty_stride_
    const auto slot = static_cast<std::size_t>(row.penalty_slot);
    if (n > 0) {
      dev_.upload(lists + slot * static_cast<std::size_t>(penalty_stride_),
                  batch.penalty_tokens.data() + row.sampling.penalty_begin,
                  static_cast<std::size_t>(n) * sizeof(gpu::penalty_token));
    }
    dev_.upload(lens + slot, &n, sizeof n);
  }
}

void llama_model::write_bias_lists(const forward_batch& batch) {
  auto* lists = static_cast<gpu::bias_token*>(bias_lists_.data());
  for (const forward_row& row : batch.rows) {
    if (!row.bias_init || row.sampling.bias_count == 0) continue;
    dev_.upload(lists + static_cast<std::size_t>(row.bias_slot) * gpu::max_bias_tokens,
                batch.bias_tokens.data() + row.sampling.bias_begin,
                static_cast<std::size_t>(row.sampling.bias_count) * sizeof(gpu::bias_token));
  }
}

void llama_model::count_penalties(const std::int32_t* src_index, const std::int32_t* dst_slot,
                                  std::int32_t n) {
  if (n == 0) return;
  dev_.count_penalty_tokens(static_cast<const std::int32_t*>(ws_->sampled.data()), src_index,
                            static_cast<gpu::penalty_token*>(penalty_lists_.data()),
                            static_cast<std::int32_t*>(penalty_lens_.data()), dst_slot,
                            penalty_stride_, n);
}

}  // namespace courier::model
