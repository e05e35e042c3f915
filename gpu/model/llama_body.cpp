// llama_model's forward body: embedding through lm_head (run_body, which eager steps run and
// graph steps capture) and sampling (sample_rows, always outside a graph).
#include <cmath>

#include "gpu/model/llama.hpp"
#include "gpu/model/llama_layer.hpp"

namespace courier::model {

gpu::tensor_view llama_model::act(const gpu::device_buffer& b, std::int64_t rows,
                                   std::int64_t cols) const {
  return b.view(dev_.compute_dtype(), rows, cols);
}

gpu::tensor_view llama_model::weight(const gpu::device_buffer& b, std::int64_t rows,
                                      std::int64_t cols) const {
  return b.view(dev_.weight_dtype(), rows, cols);
}

// Under tensor parallelism each rank embeds the ids of its vocabulary range (zeros for the
// others') and the all-reduce sums them: every rank then has every token's row.
void llama_model::embed(const step_meta& m) {
  const auto x = act(ws_->x, m.T, cfg_.hidden_size);
  dev_.embedding(m.ids, weight(embed_, tp_.vocab.count, cfg_.hidden_size), tp_.vocab.begin, x);
  if (tp_.size > 1) dev_.all_reduce_sum(x);
}

void llama_model::input_norm(const step_meta& m, std::int32_t li,
                             const gpu::device_buffer& norm) {
  const std::int64_t H = cfg_.hidden_size, T = m.T;
  workspace& w = *ws_;
  const float eps = static_cast<float>(cfg_.rms_norm_eps);
  if (li == 0) {
    dev_.rms_norm(act(w.x, T, H), weight(norm, 1, H), eps, act(w.h, T, H));
  } else {  // o: the layer (or block) before's output
    dev_.add_rms_norm(act(w.x, T, H), act(w.o, T, H), weight(norm, 1, H), eps, act(w.h, T, H));
  }
}

void llama_model::run_attention(const layer& L, const gpu::kv_cache_view& kv,
                                const step_meta& m) {
  const std::int64_t H = cfg_.hidden_size, D = cfg_.head_dim, T = m.T;
  const std::int64_t NQ = shard_.num_heads * D, NK = shard_.num_kv_heads * D;  // this rank's
  workspace& w = *ws_;
  const gpu::tensor_view none{};
  const auto qkv = act(w.qkv, T, NQ + 2 * NK), q = act(w.q, T, NQ), attn = act(w.attn, T, NQ);
  dev_.linear(act(w.h, T, H), weight(L.qkv, NQ + 2 * NK, H),
              L.qkv_bias ? weight(L.qkv_bias, 1, NQ + 2 * NK) : none, qkv);
  apply_lora(L, lora_linear::qkv, act(w.h, T, H), qkv, m);
  // Without rotary embeddings (a hybrid's attention) inv_freq_ is zeros: nothing rotates.
  dev_.qkv_rope_kv_write(qkv, shard_.num_heads, shard_.num_kv_heads, static_cast<std::int32_t>(D),
                         L.q_norm ? weight(L.q_norm, 1, D) : none,
                         L.k_norm ? weight(L.k_norm, 1, D) : none,
                         static_cast<float>(cfg_.rms_norm_eps), m.ab.positions,
                         static_cast<const float*>(inv_freq_.data()), m.ab.slot_mapping, kv, q);
  dev_.attention(q, kv, m.ab, 1.0f / std::sqrt(static_cast<float>(D)), attn);
  dev_.linear(attn, weight(L.o, H, NQ), none, act(w.o, T, H));
  apply_lora(L, lora_linear::o, attn, act(w.o, T, H), m);
  if (tp_.size > 1) dev_.all_reduce_sum(act(w.o, T, H));  // row-parallel: partial sums
}

void llama_model::run_head(const step_meta& m) {
  if (m.R == 0) return;
  const std::int64_t H = cfg_.hidden_size, V = cfg_.vocab_size, T = m.T, R = m.R;
  workspace& w = *ws_;
  const auto h = act(w.h, T, H);
  dev_.add_rms_norm(act(w.x, T, H), act(w.o, T, H), weight(final_norm_, 1, H),
                    static_cast<float>(cfg_.rms_norm_eps), h);
  const auto picked = act(w.picked, R, H);
  dev_.gather_rows(h, m.logit_index, picked);
  const auto logits = w.logits.view(gpu::dtype::f32, R, V);
  if (tp_.size == 1) {
    dev_.linear(picked, weight(lm_head_ ? lm_head_ : embed_, V, H), gpu::tensor_view{}, logits);
    return;
  }
  // Vocab-parallel: this rank's columns, then every rank's side by side, so that each samples
  // from the same whole logits (with the same seeds: the same tokens).
  const std::int64_t Vr = tp_.vocab.count;
  const auto local = w.local_logits.view(gpu::dtype::f32, R, Vr);
  dev_.linear(picked, weight(lm_head_ ? lm_head_ : embed_, Vr, H), gpu::tensor_view{}, local);
  dev_.all_gather_cols(local, logits);
}

// Embedding through lm_head for the step `m` describes: logits rows [0, m.R) of the workspace.
// Everything it reads that changes between steps is in device memory, so it can be captured.
void llama_model::run_body(const step_meta& m, kv_cache& cache) {
  if (cfg_.hybrid()) {
    run_hybrid_body(m, cache);
    return;
  }
  const std::int64_t H = cfg_.hidden_size, I = shard_.intermediate_size, T = m.T;
  workspace& w = *ws_;
  const gpu::tensor_view none{};
  const auto h = act(w.h, T, H), o = act(w.o, T, H);
  const auto gate_up = act(w.gate_up, T, 2 * I), actv = act(w.act, T, I);
  const float eps = static_cast<float>(cfg_.rms_norm_eps);

  embed(m);
  // Once per step, for every layer's attention (the plan depends on the batch, not the layer).
  dev_.plan_attention(m.ab, shard_.num_heads, shard_.num_kv_heads, cfg_.head_dim);
  for (std::int32_t li = 0; li < cfg_.num_layers; ++li) {
    const layer& L = layers_[li];
    input_norm(m, li, L.input_norm);  // o: previous layer's MLP out
    run_attention(L, cache.layer(li), m);
    dev_.add_rms_norm(act(w.x, T, H), o, weight(L.post_norm, 1, H), eps, h);
    dev_.linear(h, weight(L.gate_up, 2 * I, H), none, gate_up);
    apply_lora(L, lora_linear::gate_up, h, gate_up, m);
    dev_.silu_mul(gate_up, actv);
    dev_.linear(actv, weight(L.down, H, I), none, o);
    apply_lora(L, lora_linear::down, actv, o, m);
    if (tp_.size > 1) dev_.all_reduce_sum(o);  // row-parallel
  }
  run_head(m);
}

// Enqueues the sampling of `entries` (one logits row of sl each, in order): sampled positions
// with their row's parameters, scored positions with their target; each token also goes to the
// workspace's `sampled` (entry i at i), where the rows' next-token slots are copied from.
void llama_model::sample_rows(const forward_batch& batch, gpu::tensor_view sl,
                              const std::vector<sample_entry>& entries,
                              launched_forward& launched) {
  gpu::sampling_batch sb;
  // Penalties and bias from the slots' lists (written before the step when penalty_init,
  // bias_init): a row's penalty_slot, bias_slot.
  sb.bias_lists = static_cast<const gpu::bias_token*>(bias_lists_.data());
  sb.num_bias_lists = num_token_slots_;
  sb.penalty_lists = static_cast<const gpu::penalty_token*>(penalty_lists_.data());
  sb.penalty_list_lens = static_cast<const std::int32_t*>(penalty_lens_.data());
  sb.penalty_list_stride = penalty_stride_;
  sb.num_penalty_lists = num_token_slots_;
  sb.mask_words = batch.mask_words;    // a row's positions each have their own
  sb.end_tokens = batch.end_tokens;    // a row's positions share its slice
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
    gpu::sampling_row& s = sb.rows.back();
    s.bias_list = row.bias_slot;  // -1: no bias (validate)
    s.bias_begin = 0;
    s.penalty_list = row.penalty_slot;  // -1: no penalty list
    s.penalty_begin = 0;
    s.penalty_count = 0;
    if (row.sampling.mask_begin >= 0) s.mask_begin += e.index * mask_words;
  }
  launched.samples_ =
      dev_.sample_async(sl, sb, static_cast<std::int32_t*>(ws_->sampled.data()));
}

}  // namespace courier::model
