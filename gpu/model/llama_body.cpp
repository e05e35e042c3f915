// llama_model's forward body: embedding through lm_head (run_body, which eager steps run and
// graph steps capture) and sampling (sample_rows, always outside a graph).
#include <cmath>

#include "gpu/model/llama.hpp"
#include "gpu/model/llama_layer.hpp"

namespace courier::model {

// Embedding through lm_head for the step `m` describes: logits rows [0, m.R) of the workspace.
// Everything it reads that changes between steps is in device memory, so it can be captured.
void llama_model::run_body(const step_meta& m, kv_cache& cache) {
  if (cfg_.hybrid()) {
    run_hybrid_body(m, cache);
    return;
  }
  const std::int64_t H = cfg_.hidden_size, I = cfg_.intermediate_size, D = cfg_.head_dim;
  const std::int64_t NQ = cfg_.num_heads * D, NK = cfg_.num_kv_heads * D, V = cfg_.vocab_size;
  const std::int64_t T = m.T, R = m.R;
  const gpu::attention_batch& ab = m.ab;
  workspace& w = *ws_;
  const gpu::dtype ct = dev_.compute_dtype(), wt = dev_.weight_dtype();
  auto A = [&](const gpu::device_buffer& b, std::int64_t rows, std::int64_t cols) {
    return b.view(ct, rows, cols);
  };
  auto W = [&](const gpu::device_buffer& b, std::int64_t rows, std::int64_t cols) {
    return b.view(wt, rows, cols);
  };
  const gpu::tensor_view none{};

  const auto x = A(w.x, T, H), h = A(w.h, T, H), o = A(w.o, T, H);
  const auto qkv = A(w.qkv, T, NQ + 2 * NK), q = A(w.q, T, NQ), attn = A(w.attn, T, NQ);
  const auto gate_up = A(w.gate_up, T, 2 * I), actv = A(w.act, T, I);
  const auto* inv_freq = static_cast<const float*>(inv_freq_.data());
  const float eps = static_cast<float>(cfg_.rms_norm_eps);
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));

  dev_.embedding(m.ids, W(embed_, V, H), x);
  // Once per step, for every layer's attention (the plan depends on the batch, not the layer).
  dev_.plan_attention(ab, cfg_.num_heads, cfg_.num_kv_heads, static_cast<std::int32_t>(D));
  for (std::int32_t li = 0; li < cfg_.num_layers; ++li) {
    const layer& L = layers_[li];
    if (li == 0) {
      dev_.rms_norm(x, W(L.input_norm, 1, H), eps, h);
    } else {
      dev_.add_rms_norm(x, o, W(L.input_norm, 1, H), eps, h);  // o: previous layer's MLP out
    }
    dev_.linear(h, W(L.qkv, NQ + 2 * NK, H), L.qkv_bias ? W(L.qkv_bias, 1, NQ + 2 * NK) : none,
                qkv);
    const gpu::kv_cache_view kv = cache.layer(li);
    dev_.qkv_rope_kv_write(qkv, cfg_.num_heads, cfg_.num_kv_heads, static_cast<std::int32_t>(D),
                           L.q_norm ? W(L.q_norm, 1, D) : none, L.k_norm ? W(L.k_norm, 1, D) : none,
                           eps, ab.positions, inv_freq, ab.slot_mapping, kv, q);
    dev_.attention(q, kv, ab, scale, attn);
    dev_.linear(attn, W(L.o, H, NQ), none, o);
    dev_.add_rms_norm(x, o, W(L.post_norm, 1, H), eps, h);
    dev_.linear(h, W(L.gate_up, 2 * I, H), none, gate_up);
    dev_.silu_mul(gate_up, actv);
    dev_.linear(actv, W(L.down, H, I), none, o);
  }
  if (R == 0) return;
  dev_.add_rms_norm(x, o, W(final_norm_, 1, H), eps, h);
  const auto picked = A(w.picked, R, H);
  dev_.gather_rows(h, m.logit_index, picked);
  const auto logits = w.logits.view(gpu::dtype::f32, R, V);
  dev_.linear(picked, W(lm_head_ ? lm_head_ : embed_, V, H), none, logits);
}

// Enqueues the sampling of `entries` (one logits row of sl each, in order): sampled positions
// with their row's parameters, scored positions with their target; each token also goes to the
// workspace's `sampled` (entry i at i), where the rows' next-token slots are copied from.
void llama_model::sample_rows(const forward_batch& batch, gpu::tensor_view sl,
                              const std::vector<sample_entry>& entries,
                              launched_forward& launched) {
  gpu::sampling_batch sb;
  bool slices = false, lists = false;  // penalties from penalty_tokens, from the slots' lists
  for (const forward_row& row : batch.rows) {
    lists = lists || row.penalty_slot >= 0;
    slices = slices || (row.penalty_slot < 0 && row.sampling.penalty_count > 0);
  }
  if (slices) sb.penalty_tokens = batch.penalty_tokens;
  bool bias_slices = false, bias_lists = false;  // likewise for the logit bias
  for (const forward_row& row : batch.rows) {
    bias_lists = bias_lists || row.bias_slot >= 0;
    bias_slices = bias_slices || (row.bias_slot < 0 && row.sampling.bias_count > 0);
  }
  if (bias_lists) {
    sb.bias_lists = static_cast<const gpu::bias_token*>(bias_lists_.data());
    sb.num_bias_lists = num_token_slots_;
  }
  if (lists) {
    sb.penalty_lists = static_cast<const gpu::penalty_token*>(penalty_lists_.data());
    sb.penalty_list_lens = static_cast<const std::int32_t*>(penalty_lens_.data());
    sb.penalty_list_stride = penalty_stride_;
    sb.num_penalty_lists = num_token_slots_;
  }
  if (bias_slices) sb.bias_tokens = batch.bias_tokens;  // a row's positions share its slice
  sb.mask_words = batch.mask_words;    // a row's positions each have their own
  if (fill_) (*fill_)(sb.mask_words);  // the forward pass is enqueued: the host may wait now
  const std::int64_t mask_words = gpu::mask_words_per_row(cfg_.vocab_size);
  launched.owners_.clear();
  for (const sample_entry& e : entries) {
    const forward_row& row = batch.rows[static_cast<std::size_t>(e.row)];
    launched.owners_.emplace_back(e.row, e.score);
    if (e.score) {
      gpu::sampling_row score;  // raw logprobs only: no mask, bias, penalties or draw
      score.score_token = row.score_targets[static_cast<std::size_t>(e.index)];
      score.num_logprobs = row.score_top_n;
      sb.rows.push_back(score);
      continue;
    }
    sb.rows.push_back(row.sampling);
    sb.rows.back().draw_index += static_cast<std::uint64_t>(e.index);
    if (row.bias_slot >= 0) {  // the list, as written now (bias_init) or before
      sb.rows.back().bias_list = row.bias_slot;
      sb.rows.back().bias_begin = 0;
    }
    if (row.penalty_slot >= 0) {  // the list, as written (penalty_init) or counted before
      sb.rows.back().penalty_list = row.penalty_slot;
      sb.rows.back().penalty_begin = 0;
      sb.rows.back().penalty_count = 0;
    }
    if (row.sampling.mask_begin >= 0) sb.rows.back().mask_begin += e.index * mask_words;
  }
  launched.samples_ =
      dev_.sample_async(sl, sb, static_cast<std::int32_t*>(ws_->sampled.data()));
}

}  // namespace courier::model
