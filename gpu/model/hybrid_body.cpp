// A hybrid model's forward body (NemotronH): embedding, then each layer a block of RMSNorm, one
// mixer (Mamba-2, attention without rotary embeddings, or a squared-ReLU MLP) and the residual,
// then the final norm and lm_head; and the calls that size and copy the per-sequence Mamba-2
// states the mixers carry (mamba_states).
#include <stdexcept>

#include "gpu/model/llama.hpp"
#include "gpu/model/llama_layer.hpp"

namespace courier::model {

std::size_t llama_model::reserve_states(std::int32_t slots, std::int32_t draft_rows) {
  if (!cfg_.hybrid()) return 0;
  // Graph steps' padding rows need a row of their own.
  return states_.reserve(slots, draft_rows, graphs_ != nullptr);
}

std::size_t llama_model::reserve_host_states(std::int32_t rows) {
  return cfg_.hybrid() ? states_.reserve_host(rows) : 0;
}

void llama_model::copy_states(const std::vector<state_copy>& copies) {
  if (!cfg_.hybrid() && !copies.empty()) {
    throw std::invalid_argument("forward batch: state copies for a model without state");
  }
  for (const state_copy& c : copies) states_.copy_host(c.row, c.host_row, c.to_host);
}

void llama_model::run_hybrid_body(const step_meta& m, kv_cache& cache) {
  const std::int64_t H = cfg_.hidden_size, I = shard_.intermediate_size, T = m.T;
  const mamba_config& mc = shard_.mamba;  // this rank's heads and groups
  const std::int64_t inter = mc.intermediate(), C = mc.conv_dim(), P = mc.in_proj_dim();
  const std::int64_t heads = mc.num_heads;
  workspace& w = *ws_;
  const gpu::tensor_view none{};
  const auto h = act(w.h, T, H), o = act(w.o, T, H);
  const auto up = act(w.gate_up, T, I), actv = act(w.act, T, I);
  const auto proj = act(w.proj, T, P), xbc = act(w.xbc, T, C), y = act(w.ssm_y, T, inter),
             gated = act(w.gated, T, inter);
  const float eps = static_cast<float>(cfg_.rms_norm_eps);
  // A group's columns in the whole model, and its sums' rows (when ranks share groups).
  const std::int64_t group_cols = cfg_.mamba.intermediate() / cfg_.mamba.n_groups;
  const gpu::tensor_view norm_sums =
      tp_.mamba_group_ranks > 1 ? w.norm_sums.view(gpu::dtype::f32, T, cfg_.mamba.n_groups)
                                : gpu::tensor_view{};
  gpu::mamba_shape shape;
  shape.num_heads = mc.num_heads;
  shape.head_dim = mc.head_dim;
  shape.state_size = mc.state_size;
  shape.n_groups = mc.n_groups;
  shape.dt_min = static_cast<float>(mc.time_step_min);

  embed(m);
  if (cfg_.kv_layers() > 0) {
    dev_.plan_attention(m.ab, shard_.num_heads, shard_.num_kv_heads, cfg_.head_dim);
  }
  for (std::int32_t li = 0; li < cfg_.num_layers; ++li) {
    const layer& L = layers_[li];
    input_norm(m, li, L.input_norm);  // o: the block before's mixer
    switch (L.kind) {
      case layer_kind::mamba:
        dev_.linear(h, weight(L.in_proj, P, H), none, proj);  // [gate z | x B C | dt]
        apply_lora(L, lora_linear::in_proj, h, proj, m);
        dev_.mamba_conv1d(proj, inter, weight(L.conv_w, C, mc.conv_kernel),
                          L.conv_b ? weight(L.conv_b, 1, C) : none, states_.conv(L.state_index),
                          m.mb, xbc);
        dev_.mamba_scan(xbc, proj, inter + C, weight(L.A_log, 1, heads),
                        weight(L.dt_bias, 1, heads), weight(L.D, 1, heads), shape,
                        states_.ssm(L.state_index), m.mb, y);
        if (tp_.mamba_group_ranks > 1) {  // this rank's channels are part of one group
          dev_.gated_square_sums(y, proj, tp_.mamba_groups.begin, norm_sums);
          dev_.all_reduce_sum(norm_sums);
          dev_.gated_rms_norm_summed(y, proj, weight(L.mixer_norm, 1, inter), norm_sums,
                                     tp_.mamba_groups.begin, group_cols, eps, gated);
        } else {
          dev_.gated_rms_norm(y, proj, weight(L.mixer_norm, 1, inter), inter / mc.n_groups, eps,
                              gated);
        }
        dev_.linear(gated, weight(L.out_proj, H, inter), none, o);
        apply_lora(L, lora_linear::out_proj, gated, o, m);
        if (tp_.size > 1) dev_.all_reduce_sum(o);  // row-parallel: partial sums
        break;
      case layer_kind::attention:  // no rotary embeddings, no q/k norm, no bias
        run_attention(L, cache.layer(L.kv_index), m);
        break;
      case layer_kind::mlp:
        dev_.linear(h, weight(L.up, I, H), none, up);
        apply_lora(L, lora_linear::up, h, up, m);
        dev_.relu2(up, actv);
        dev_.linear(actv, weight(L.down, H, I), none, o);
        apply_lora(L, lora_linear::down, actv, o, m);
        if (tp_.size > 1) dev_.all_reduce_sum(o);  // row-parallel
        break;
    }
  }
  run_head(m);
}

}  // namespace courier::model
