// The pieces every architecture's body shares (model_body.hpp): the embedding, the input norm, an
// attention layer, the final norm and lm_head; sampling (sample_rows, always outside a graph);
// and the Llama family's body: its weights and its layer loop.
#include <fmt/format.h>

#include <cmath>

#include "gpu/model/llama.hpp"
#include "gpu/model/llama_layer.hpp"
#include "gpu/model/model_body.hpp"

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

void llama_model::input_norm(const step_meta& m, std::int32_t li, const gpu::device_buffer& norm) {
  const std::int64_t H = cfg_.hidden_size, T = m.T;
  workspace& w = *ws_;
  const float eps = static_cast<float>(cfg_.rms_norm_eps);
  if (li == 0) {
    dev_.rms_norm(act(w.x, T, H), weight(norm, 1, H), eps, act(w.h, T, H));
  } else {  // o: the layer (or block) before's output
    dev_.add_rms_norm(act(w.x, T, H), act(w.o, T, H), weight(norm, 1, H), eps, act(w.h, T, H));
  }
}

void llama_model::run_attention(const layer& L, const gpu::kv_cache_view& kv, const step_meta& m) {
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

void llama_family_body::run(llama_model& m, const llama_model::step_meta& s,
                            kv_cache& cache) const {
  const std::int64_t H = m.cfg_.hidden_size, I = m.shard_.intermediate_size, T = s.T;
  llama_model::workspace& w = *m.ws_;
  const gpu::tensor_view none{};
  const auto h = m.act(w.h, T, H), o = m.act(w.o, T, H);
  const auto gate_up = m.act(w.gate_up, T, 2 * I), actv = m.act(w.act, T, I);
  const float eps = static_cast<float>(m.cfg_.rms_norm_eps);

  m.embed(s);
  // Once per step, for every layer's attention (the plan depends on the batch, not the layer).
  m.dev_.plan_attention(s.ab, m.shard_.num_heads, m.shard_.num_kv_heads, m.cfg_.head_dim);
  for (std::int32_t li = 0; li < m.cfg_.num_layers; ++li) {
    const llama_model::layer& L = m.layers_[li];
    m.input_norm(s, li, L.input_norm);  // o: previous layer's MLP out
    m.run_attention(L, cache.layer(li), s);
    m.dev_.add_rms_norm(m.act(w.x, T, H), o, m.weight(L.post_norm, 1, H), eps, h);
    m.dev_.linear(h, m.weight(L.gate_up, 2 * I, H), none, gate_up);
    m.apply_lora(L, lora_linear::gate_up, h, gate_up, s);
    m.dev_.silu_mul(gate_up, actv);
    m.dev_.linear(actv, m.weight(L.down, H, I), none, o);
    m.apply_lora(L, lora_linear::down, actv, o, s);
    if (m.tp_.size > 1) m.dev_.all_reduce_sum(o);  // row-parallel
  }
  m.run_head(s);
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
  launched.samples_ = dev_.sample_async(sl, sb, static_cast<std::int32_t*>(ws_->sampled.data()));
}

// Under tensor parallelism (tp_) each tensor is this rank's slice: q/k/v, their biases and
// gate/up by rows (its heads, its MLP columns), o and down by columns, the embedding and lm_head
// by rows (its vocabulary range); norms whole.
void llama_family_body::make_weights(llama_model& m, const weight_maker& take) const {
  const std::int64_t H = m.cfg_.hidden_size, I = m.cfg_.intermediate_size, D = m.cfg_.head_dim;
  const std::int64_t NQ = m.cfg_.num_heads * D, NK = m.cfg_.num_kv_heads * D, V = m.cfg_.vocab_size;
  auto one = [&](std::string name, std::vector<std::int64_t> shape, tp_range rows = {},
                 tp_range cols = {}) {
    return take(std::vector<weight_part>{{std::move(name), std::move(shape), rows, cols}});
  };
  const bool split = m.tp_.size > 1;
  auto heads = [&](tp_range h) { return split ? tp_range{h.begin * D, h.count * D} : tp_range{}; };
  const tp_range q = heads(m.tp_.q_heads), kv = heads(m.tp_.kv_heads);
  const tp_range ffn = split ? m.tp_.ffn : tp_range{}, vocab = split ? m.tp_.vocab : tp_range{};
  m.embed_ = one("model.embed_tokens.weight", {V, H}, vocab);
  m.final_norm_ = one("model.norm.weight", {H});
  if (!m.cfg_.tie_word_embeddings) {
    m.lm_head_ = one("lm_head.weight", {V, H}, vocab);
  }
  m.layers_.resize(static_cast<std::size_t>(m.cfg_.num_layers));
  for (std::int32_t i = 0; i < m.cfg_.num_layers; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    llama_model::layer& L = m.layers_[i];
    L.input_norm = one(p + "input_layernorm.weight", {H});
    L.post_norm = one(p + "post_attention_layernorm.weight", {H});
    L.qkv = take(std::vector<weight_part>{{p + "self_attn.q_proj.weight", {NQ, H}, q},
                                          {p + "self_attn.k_proj.weight", {NK, H}, kv},
                                          {p + "self_attn.v_proj.weight", {NK, H}, kv}});
    L.o = one(p + "self_attn.o_proj.weight", {H, NQ}, {}, q);
    if (m.cfg_.qkv_bias) {
      L.qkv_bias = take(std::vector<weight_part>{{p + "self_attn.q_proj.bias", {NQ}, q},
                                                 {p + "self_attn.k_proj.bias", {NK}, kv},
                                                 {p + "self_attn.v_proj.bias", {NK}, kv}});
    }
    if (m.cfg_.qk_norm) {
      L.q_norm = one(p + "self_attn.q_norm.weight", {D});
      L.k_norm = one(p + "self_attn.k_norm.weight", {D});
    }
    L.gate_up = take(std::vector<weight_part>{{p + "mlp.gate_proj.weight", {I, H}, ffn},
                                              {p + "mlp.up_proj.weight", {I, H}, ffn}});
    L.down = one(p + "mlp.down_proj.weight", {H, I}, {}, ffn);
  }
}

}  // namespace courier::model
