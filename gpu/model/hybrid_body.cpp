// A hybrid model's body (NemotronH, model_body.hpp): its weights and its layer loop, each layer a
// block of RMSNorm, one mixer (Mamba-2, attention without rotary embeddings, or a squared-ReLU
// MLP) and the residual; and the calls that size and copy the per-sequence Mamba-2 states the
// mixers carry (mamba_states).
#include <fmt/format.h>

#include <stdexcept>

#include "gpu/model/llama.hpp"
#include "gpu/model/llama_layer.hpp"
#include "gpu/model/model_body.hpp"

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

void nemotron_h_body::run(llama_model& m, const llama_model::step_meta& s, kv_cache& cache) const {
  const std::int64_t H = m.cfg_.hidden_size, I = m.shard_.intermediate_size, T = s.T;
  const mamba_config& mc = m.shard_.mamba;  // this rank's heads and groups
  const std::int64_t inter = mc.intermediate(), C = mc.conv_dim(), P = mc.in_proj_dim();
  const std::int64_t heads = mc.num_heads;
  llama_model::workspace& w = *m.ws_;
  const gpu::tensor_view none{};
  const auto h = m.act(w.h, T, H), o = m.act(w.o, T, H);
  const auto up = m.act(w.gate_up, T, I), actv = m.act(w.act, T, I);
  const auto proj = m.act(w.proj, T, P), xbc = m.act(w.xbc, T, C), y = m.act(w.ssm_y, T, inter),
             gated = m.act(w.gated, T, inter);
  const float eps = static_cast<float>(m.cfg_.rms_norm_eps);
  // A group's columns in the whole model, and its sums' rows (when ranks share groups).
  const std::int64_t group_cols = m.cfg_.mamba.intermediate() / m.cfg_.mamba.n_groups;
  const gpu::tensor_view norm_sums =
      m.tp_.mamba_group_ranks > 1 ? w.norm_sums.view(gpu::dtype::f32, T, m.cfg_.mamba.n_groups)
                                  : gpu::tensor_view{};
  gpu::mamba_shape shape;
  shape.num_heads = mc.num_heads;
  shape.head_dim = mc.head_dim;
  shape.state_size = mc.state_size;
  shape.n_groups = mc.n_groups;
  shape.dt_min = static_cast<float>(mc.time_step_min);

  m.embed(s);
  if (m.cfg_.kv_layers() > 0) {
    m.dev_.plan_attention(s.ab, m.shard_.num_heads, m.shard_.num_kv_heads, m.cfg_.head_dim);
  }
  for (std::int32_t li = 0; li < m.cfg_.num_layers; ++li) {
    const llama_model::layer& L = m.layers_[li];
    m.input_norm(s, li, L.input_norm);  // o: the block before's mixer
    switch (L.kind) {
      case layer_kind::mamba:
        m.dev_.linear(h, m.weight(L.in_proj, P, H), none, proj);  // [gate z | x B C | dt]
        m.apply_lora(L, lora_linear::in_proj, h, proj, s);
        m.dev_.mamba_conv1d(proj, inter, m.weight(L.conv_w, C, mc.conv_kernel),
                            L.conv_b ? m.weight(L.conv_b, 1, C) : none,
                            m.states_.conv(L.state_index), s.mb, xbc);
        m.dev_.mamba_scan(xbc, proj, inter + C, m.weight(L.A_log, 1, heads),
                          m.weight(L.dt_bias, 1, heads), m.weight(L.D, 1, heads), shape,
                          m.states_.ssm(L.state_index), s.mb, y);
        if (m.tp_.mamba_group_ranks > 1) {  // this rank's channels are part of one group
          m.dev_.gated_square_sums(y, proj, m.tp_.mamba_groups.begin, norm_sums);
          m.dev_.all_reduce_sum(norm_sums);
          m.dev_.gated_rms_norm_summed(y, proj, m.weight(L.mixer_norm, 1, inter), norm_sums,
                                       m.tp_.mamba_groups.begin, group_cols, eps, gated);
        } else {
          m.dev_.gated_rms_norm(y, proj, m.weight(L.mixer_norm, 1, inter), inter / mc.n_groups, eps,
                                gated);
        }
        m.dev_.linear(gated, m.weight(L.out_proj, H, inter), none, o);
        m.apply_lora(L, lora_linear::out_proj, gated, o, s);
        if (m.tp_.size > 1) m.dev_.all_reduce_sum(o);  // row-parallel: partial sums
        break;
      case layer_kind::attention:  // no rotary embeddings, no q/k norm, no bias
        m.run_attention(L, cache.layer(L.kv_index), s);
        break;
      case layer_kind::mlp:
        m.dev_.linear(h, m.weight(L.up, I, H), none, up);
        m.apply_lora(L, lora_linear::up, h, up, s);
        m.dev_.relu2(up, actv);
        m.dev_.linear(actv, m.weight(L.down, H, I), none, o);
        m.apply_lora(L, lora_linear::down, actv, o, s);
        if (m.tp_.size > 1) m.dev_.all_reduce_sum(o);  // row-parallel
        break;
    }
  }
  m.run_head(s);
}

// NemotronH (transformers' NemotronHForCausalLM; the hub's checkpoints name it "backbone").
// Under tensor parallelism, attention, the MLP and the vocabulary split as Llama's do; a Mamba-2
// mixer by its heads and B/C groups: in_proj's rows [z | x | B | C | dt] each give this rank's
// part (the same order, so the rank's projection is laid out as a smaller mixer's), conv1d's
// channels [x | B | C] likewise, A, D, dt_bias and the gated norm by heads, out_proj by columns.
void nemotron_h_body::make_weights(llama_model& m, const weight_maker& take) const {
  const std::int64_t H = m.cfg_.hidden_size, I = m.cfg_.intermediate_size, D = m.cfg_.head_dim;
  const std::int64_t NQ = m.cfg_.num_heads * D, NK = m.cfg_.num_kv_heads * D, V = m.cfg_.vocab_size;
  const mamba_config& mc = m.cfg_.mamba;
  const std::int64_t heads = mc.num_heads, inter = mc.intermediate(), C = mc.conv_dim();
  const std::int64_t GN = static_cast<std::int64_t>(mc.n_groups) * mc.state_size;
  auto one = [&](std::string name, std::vector<std::int64_t> shape, tp_range rows = {},
                 tp_range cols = {}) {
    return take(std::vector<weight_part>{{std::move(name), std::move(shape), rows, cols}});
  };
  const bool split = m.tp_.size > 1;
  auto scaled = [&](tp_range r, std::int64_t by, std::int64_t offset = 0) {
    return split ? tp_range{offset + r.begin * by, r.count * by} : tp_range{};
  };
  const tp_range q = scaled(m.tp_.q_heads, D), kv = scaled(m.tp_.kv_heads, D);
  const tp_range ffn = split ? m.tp_.ffn : tp_range{}, vocab = split ? m.tp_.vocab : tp_range{};
  const tp_range mh = split ? m.tp_.mamba_heads : tp_range{};
  const tp_range ch = scaled(m.tp_.mamba_heads, mc.head_dim);  // the heads' channels
  m.embed_ = one("backbone.embeddings.weight", {V, H}, vocab);
  m.final_norm_ = one("backbone.norm_f.weight", {H});
  if (!m.cfg_.tie_word_embeddings) m.lm_head_ = one("lm_head.weight", {V, H}, vocab);
  m.layers_.resize(static_cast<std::size_t>(m.cfg_.num_layers));
  std::int32_t kv_layer = 0, states = 0;
  for (std::int32_t i = 0; i < m.cfg_.num_layers; ++i) {
    const std::string p = fmt::format("backbone.layers.{}.", i);
    llama_model::layer& L = m.layers_[i];
    L.kind = m.cfg_.layers[static_cast<std::size_t>(i)];
    L.input_norm = one(p + "norm.weight", {H});
    switch (L.kind) {
      case layer_kind::attention:
        L.kv_index = kv_layer++;
        L.qkv = take(std::vector<weight_part>{{p + "mixer.q_proj.weight", {NQ, H}, q},
                                              {p + "mixer.k_proj.weight", {NK, H}, kv},
                                              {p + "mixer.v_proj.weight", {NK, H}, kv}});
        L.o = one(p + "mixer.o_proj.weight", {H, NQ}, {}, q);
        break;
      case layer_kind::mlp:
        L.up = one(p + "mixer.up_proj.weight", {I, H}, ffn);
        L.down = one(p + "mixer.down_proj.weight", {H, I}, {}, ffn);
        break;
      case layer_kind::mamba: {
        L.state_index = states++;
        const std::string in = p + "mixer.in_proj.weight", conv = p + "mixer.conv1d.weight";
        const std::vector<std::int64_t> in_shape{mc.in_proj_dim(), H},
            conv_shape{C, 1, mc.conv_kernel};
        const tp_range b = scaled(m.tp_.mamba_groups, mc.state_size, 0);
        auto at = [&](tp_range r, std::int64_t offset) {
          return split ? tp_range{offset + r.begin, r.count} : tp_range{};
        };
        if (split) {
          std::vector<weight_part> in_parts;
          for (const tp_range& rows : mamba_in_proj_rows(m.cfg_, m.tp_)) {
            in_parts.push_back({in, in_shape, rows});
          }
          L.in_proj = take(std::move(in_parts));
          L.conv_w = take(std::vector<weight_part>{{conv, conv_shape, at(ch, 0)},
                                                   {conv, conv_shape, at(b, inter)},
                                                   {conv, conv_shape, at(b, inter + GN)}});
          if (mc.conv_bias) {
            const std::string cb = p + "mixer.conv1d.bias";
            L.conv_b = take(std::vector<weight_part>{
                {cb, {C}, at(ch, 0)}, {cb, {C}, at(b, inter)}, {cb, {C}, at(b, inter + GN)}});
          }
        } else {
          L.in_proj = one(in, in_shape);
          L.conv_w = one(conv, conv_shape);
          if (mc.conv_bias) L.conv_b = one(p + "mixer.conv1d.bias", {C});
        }
        L.A_log = one(p + "mixer.A_log", {heads}, mh);
        L.dt_bias = one(p + "mixer.dt_bias", {heads}, mh);
        L.D = one(p + "mixer.D", {heads}, mh);
        L.mixer_norm = one(p + "mixer.norm.weight", {inter}, ch);
        L.out_proj = one(p + "mixer.out_proj.weight", {H, inter}, {}, ch);
        break;
      }
    }
  }
}

}  // namespace courier::model
