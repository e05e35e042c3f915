// A hybrid model's forward body (NemotronH): embedding, then each layer a block of RMSNorm, one
// mixer (Mamba-2, attention without rotary embeddings, or a squared-ReLU MLP) and the residual,
// then the final norm and lm_head; and the per-sequence Mamba-2 states the mixers carry.
#include <cmath>

#include "gpu/model/llama.hpp"
#include "gpu/model/llama_layer.hpp"

namespace courier::model {

namespace {

std::size_t conv_state_floats(const mamba_config& mc) {
  return static_cast<std::size_t>(mc.conv_dim()) * static_cast<std::size_t>(mc.conv_kernel - 1);
}

std::size_t ssm_state_floats(const mamba_config& mc) {
  return static_cast<std::size_t>(mc.num_heads) * static_cast<std::size_t>(mc.head_dim) *
         static_cast<std::size_t>(mc.state_size);
}

}  // namespace

void llama_model::ensure_states(std::int32_t slots) {
  if (slots <= state_slots_) return;
  const auto layers = static_cast<std::size_t>(cfg_.mamba_layers());
  const auto rows = static_cast<std::size_t>(slots);
  conv_states_ = dev_.allocate(layers * rows * conv_state_floats(cfg_.mamba) * sizeof(float));
  ssm_states_ = dev_.allocate(layers * rows * ssm_state_floats(cfg_.mamba) * sizeof(float));
  state_slots_ = slots;
}

std::size_t llama_model::state_bytes_per_slot() const {
  return static_cast<std::size_t>(cfg_.mamba_layers()) *
         (conv_state_floats(cfg_.mamba) + ssm_state_floats(cfg_.mamba)) * sizeof(float);
}

std::size_t llama_model::reserve_states(std::int32_t slots) {
  if (!cfg_.hybrid()) return 0;
  ensure_states(slots);
  return conv_states_.size_bytes() + ssm_states_.size_bytes();
}

void llama_model::copy_states(std::int32_t src, std::int32_t dst) {
  const std::size_t conv = conv_state_floats(cfg_.mamba), ssm = ssm_state_floats(cfg_.mamba);
  for (std::int32_t l = 0; l < cfg_.mamba_layers(); ++l) {
    dev_.copy_device(conv_states(l) + static_cast<std::size_t>(dst) * conv,
                     conv_states(l) + static_cast<std::size_t>(src) * conv, conv * sizeof(float));
    dev_.copy_device(ssm_states(l) + static_cast<std::size_t>(dst) * ssm,
                     ssm_states(l) + static_cast<std::size_t>(src) * ssm, ssm * sizeof(float));
  }
}

float* llama_model::conv_states(std::int32_t state_index) const {
  return static_cast<float*>(conv_states_.data()) +
         static_cast<std::size_t>(state_index) * static_cast<std::size_t>(state_slots_) *
             conv_state_floats(cfg_.mamba);
}

float* llama_model::ssm_states(std::int32_t state_index) const {
  return static_cast<float*>(ssm_states_.data()) +
         static_cast<std::size_t>(state_index) * static_cast<std::size_t>(state_slots_) *
             ssm_state_floats(cfg_.mamba);
}

void llama_model::run_hybrid_body(const step_meta& m, kv_cache& cache) {
  const std::int64_t H = cfg_.hidden_size, I = cfg_.intermediate_size, D = cfg_.head_dim;
  const std::int64_t NQ = cfg_.num_heads * D, NK = cfg_.num_kv_heads * D, V = cfg_.vocab_size;
  const mamba_config& mc = cfg_.mamba;
  const std::int64_t inter = mc.intermediate(), C = mc.conv_dim(), P = mc.in_proj_dim();
  const std::int64_t heads = mc.num_heads, T = m.T, R = m.R;
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
  const auto up = A(w.gate_up, T, I), actv = A(w.act, T, I);
  const auto proj = A(w.proj, T, P), xbc = A(w.xbc, T, C), y = A(w.ssm_y, T, inter),
             gated = A(w.gated, T, inter);
  const auto* inv_freq = static_cast<const float*>(inv_freq_.data());  // zeros: no rotation
  const float eps = static_cast<float>(cfg_.rms_norm_eps);
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  gpu::mamba_shape shape;
  shape.num_heads = mc.num_heads;
  shape.head_dim = mc.head_dim;
  shape.state_size = mc.state_size;
  shape.n_groups = mc.n_groups;
  shape.dt_min = static_cast<float>(mc.time_step_min);

  dev_.embedding(m.ids, W(embed_, V, H), x);
  if (cfg_.kv_layers() > 0) {
    dev_.plan_attention(ab, cfg_.num_heads, cfg_.num_kv_heads, static_cast<std::int32_t>(D));
  }
  for (std::int32_t li = 0; li < cfg_.num_layers; ++li) {
    const layer& L = layers_[li];
    if (li == 0) {
      dev_.rms_norm(x, W(L.input_norm, 1, H), eps, h);
    } else {
      dev_.add_rms_norm(x, o, W(L.input_norm, 1, H), eps, h);  // o: the block before's mixer
    }
    switch (L.kind) {
      case layer_kind::mamba:
        dev_.linear(h, W(L.in_proj, P, H), none, proj);  // [gate z | x B C | dt]
        dev_.mamba_conv1d(proj, inter, W(L.conv_w, C, mc.conv_kernel),
                          L.conv_b ? W(L.conv_b, 1, C) : none, conv_states(L.state_index), m.mb,
                          xbc);
        dev_.mamba_scan(xbc, proj, inter + C, W(L.A_log, 1, heads), W(L.dt_bias, 1, heads),
                        W(L.D, 1, heads), shape, ssm_states(L.state_index), m.mb, y);
        dev_.gated_rms_norm(y, proj, W(L.mixer_norm, 1, inter), inter / mc.n_groups, eps, gated);
        dev_.linear(gated, W(L.out_proj, H, inter), none, o);
        break;
      case layer_kind::attention: {
        const gpu::kv_cache_view kv = cache.layer(L.kv_index);
        dev_.linear(h, W(L.qkv, NQ + 2 * NK, H), none, qkv);
        dev_.qkv_rope_kv_write(qkv, cfg_.num_heads, cfg_.num_kv_heads,
                               static_cast<std::int32_t>(D), none, none, eps, ab.positions,
                               inv_freq, ab.slot_mapping, kv, q);
        dev_.attention(q, kv, ab, scale, attn);
        dev_.linear(attn, W(L.o, H, NQ), none, o);
        break;
      }
      case layer_kind::mlp:
        dev_.linear(h, W(L.up, I, H), none, up);
        dev_.relu2(up, actv);
        dev_.linear(actv, W(L.down, H, I), none, o);
        break;
    }
  }
  if (R == 0) return;
  dev_.add_rms_norm(x, o, W(final_norm_, 1, H), eps, h);
  const auto picked = A(w.picked, R, H);
  dev_.gather_rows(h, m.logit_index, picked);
  const auto logits = w.logits.view(gpu::dtype::f32, R, V);
  dev_.linear(picked, W(lm_head_ ? lm_head_ : embed_, V, H), none, logits);
}

}  // namespace courier::model
