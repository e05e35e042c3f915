#include "gpu/model/llama.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "gpu/model/safetensors.hpp"

namespace courier::model {

struct llama_model::layer {
  gpu::device_buffer input_norm, post_norm;
  gpu::device_buffer q, k, v, o;
  gpu::device_buffer q_bias, k_bias, v_bias;  // empty unless cfg_.qkv_bias
  gpu::device_buffer q_norm, k_norm;          // empty unless cfg_.qk_norm
  gpu::device_buffer gate, up, down;
};

// Activations for up to `tokens` tokens and `logit_rows` logits rows, and the step's metadata
// (token ids, positions, slots, token -> row, row lengths, block tables, logits and sample
// indices) packed into one int32 buffer, so that a step uploads it in one copy. Invariant: every
// buffer is large enough for the capacity recorded here.
struct llama_model::workspace {
  std::int64_t tokens = 0, logit_rows = 0, seqs = 0;
  gpu::device_buffer x, h, q, k, v, attn, o, gate, up, act;
  gpu::device_buffer meta;
  gpu::device_buffer picked, logits, sample_logits;
};

namespace {

std::string shape_str(const std::vector<std::int64_t>& s) {
  return fmt::format("[{}]", fmt::join(s, ", "));
}

// Each metadata array starts at a multiple of 4 entries (16 bytes).
std::int64_t meta_pad(std::int64_t n) { return (n + 3) / 4 * 4; }

// Appends v to the packed metadata; returns where it starts.
std::int64_t pack(std::vector<std::int32_t>& packed, const std::vector<std::int32_t>& v) {
  const auto at = static_cast<std::int64_t>(packed.size());
  packed.insert(packed.end(), v.begin(), v.end());
  packed.resize(static_cast<std::size_t>(at + meta_pad(static_cast<std::int64_t>(v.size()))), 0);
  return at;
}

}  // namespace

llama_model::llama_model(gpu::device& dev, model_config cfg)
    : dev_(dev), cfg_(std::move(cfg)), ws_(std::make_unique<workspace>()) {}

llama_model::~llama_model() = default;

std::unique_ptr<llama_model> llama_model::load(const std::string& dir, gpu::device& dev) {
  model_config cfg = load_model_config(dir);
  const weight_store ws = weight_store::open(dir);
  std::unique_ptr<llama_model> m(new llama_model(dev, std::move(cfg)));
  m->make_weights([&](const std::string& name, const std::vector<std::int64_t>& shape) {
    const gpu::host_tensor& t = ws.tensor(name);
    if (t.type == gpu::dtype::i32) {
      throw model_error(fmt::format("{}: tensor {} has dtype I32; weights must be F32, BF16 or F16",
                                    ws.file_of(name), name));
    }
    if (t.shape != shape) {
      throw model_error(fmt::format("{}: tensor {} has shape {}, expected {} from config.json",
                                    ws.file_of(name), name, shape_str(t.shape), shape_str(shape)));
    }
    m->weight_bytes_ += t.size_bytes;
    return dev.load_weight(t);
  });
  m->upload_inv_freq();
  return m;
}

std::unique_ptr<llama_model> llama_model::random(model_config cfg, gpu::device& dev,
                                                 std::uint64_t seed) {
  std::unique_ptr<llama_model> m(new llama_model(dev, std::move(cfg)));
  std::uint64_t index = 0;
  m->make_weights([&](const std::string& name, const std::vector<std::int64_t>& shape) {
    std::int64_t n = 1;
    for (std::int64_t d : shape) n *= d;
    const auto bytes = static_cast<std::size_t>(n) * gpu::dtype_size(dev.weight_dtype());
    gpu::device_buffer b = dev.allocate(bytes);
    m->weight_bytes_ += bytes;
    const bool norm = name.size() > 11 && name.compare(name.size() - 11, 11, "norm.weight") == 0;
    const bool bias = name.size() > 4 && name.compare(name.size() - 4, 4, "bias") == 0;
    const bool embed = name == "model.embed_tokens.weight";
    const float scale = norm ? 0.1f
                        : bias ? 0.02f
                        : embed ? 1.0f
                                : 1.0f / std::sqrt(static_cast<float>(shape.back()));
    dev.fill_random(b.view(dev.weight_dtype(), 1, n), seed * 1000003u + index++, norm ? 1.0f : 0.0f,
                    scale);
    return b;
  });
  m->upload_inv_freq();
  dev.synchronize();
  return m;
}

void llama_model::upload_inv_freq() {
  const std::vector<float> inv = rope_inv_freq(cfg_);
  inv_freq_ = dev_.allocate(inv.size() * sizeof(float));
  dev_.upload(inv_freq_.data(), inv.data(), inv.size() * sizeof(float));
}

template <typename Make>
void llama_model::make_weights(Make&& take) {
  const std::int64_t H = cfg_.hidden_size, I = cfg_.intermediate_size, D = cfg_.head_dim;
  const std::int64_t NQ = cfg_.num_heads * D, NK = cfg_.num_kv_heads * D, V = cfg_.vocab_size;
  embed_ = take("model.embed_tokens.weight", {V, H});
  final_norm_ = take("model.norm.weight", {H});
  if (!cfg_.tie_word_embeddings) {
    lm_head_ = take("lm_head.weight", {V, H});
  }
  layers_.resize(static_cast<std::size_t>(cfg_.num_layers));
  for (std::int32_t i = 0; i < cfg_.num_layers; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    layer& L = layers_[i];
    L.input_norm = take(p + "input_layernorm.weight", {H});
    L.post_norm = take(p + "post_attention_layernorm.weight", {H});
    L.q = take(p + "self_attn.q_proj.weight", {NQ, H});
    L.k = take(p + "self_attn.k_proj.weight", {NK, H});
    L.v = take(p + "self_attn.v_proj.weight", {NK, H});
    L.o = take(p + "self_attn.o_proj.weight", {H, NQ});
    if (cfg_.qkv_bias) {
      L.q_bias = take(p + "self_attn.q_proj.bias", {NQ});
      L.k_bias = take(p + "self_attn.k_proj.bias", {NK});
      L.v_bias = take(p + "self_attn.v_proj.bias", {NK});
    }
    if (cfg_.qk_norm) {
      L.q_norm = take(p + "self_attn.q_norm.weight", {D});
      L.k_norm = take(p + "self_attn.k_norm.weight", {D});
    }
    L.gate = take(p + "mlp.gate_proj.weight", {I, H});
    L.up = take(p + "mlp.up_proj.weight", {I, H});
    L.down = take(p + "mlp.down_proj.weight", {H, I});
  }
}

void llama_model::validate(const forward_batch& batch, const kv_cache& cache) const {
  if (batch.rows.empty()) throw std::invalid_argument("forward: empty batch");
  for (std::size_t r = 0; r < batch.rows.size(); ++r) {
    const forward_row& row = batch.rows[r];
    if (row.tokens.empty()) throw std::invalid_argument(fmt::format("forward: row {} is empty", r));
    if (row.start_pos < 0) throw std::invalid_argument("forward: negative start position");
    const std::int64_t end = row.start_pos + static_cast<std::int64_t>(row.tokens.size());
    const std::int64_t need = (end + cache.block_size() - 1) / cache.block_size();
    if (static_cast<std::int64_t>(row.block_table.size()) < need) {
      throw std::invalid_argument(fmt::format(
          "forward: row {} needs {} blocks for {} tokens, has {}", r, need, end,
          row.block_table.size()));
    }
    for (std::int64_t b = 0; b < need; ++b) {
      if (row.block_table[b] < 0 || row.block_table[b] >= cache.num_blocks()) {
        throw std::invalid_argument(fmt::format("forward: row {} block {} out of range", r, b));
      }
    }
    for (token_id t : row.tokens) {
      if (t >= static_cast<token_id>(cfg_.vocab_size)) {
        throw std::invalid_argument(fmt::format("forward: token id {} is outside the vocabulary "
                                                "of {}", t, cfg_.vocab_size));
      }
    }
    if (row.sample && (row.num_sample < 1 || row.num_sample > static_cast<std::int32_t>(row.tokens.size()) ||
                       (row.num_sample > 1 && row.sampling.penalty_count > 0))) {
      throw std::invalid_argument(fmt::format("forward: row {} samples {} positions", r,
                                              row.num_sample));
    }
    if (row.sample && row.sampling.penalty_count > 0 &&
        static_cast<std::size_t>(row.sampling.penalty_begin + row.sampling.penalty_count) >
            batch.penalty_tokens.size()) {
      throw std::invalid_argument("forward: penalty tokens out of range");
    }
  }
}

void llama_model::ensure_workspace(std::int64_t T, std::int64_t S, std::int64_t R,
                                   std::int64_t P, std::int64_t gathered,
                                   std::int64_t table_entries) {
  const std::int64_t H = cfg_.hidden_size, I = cfg_.intermediate_size;
  const std::int64_t NQ = cfg_.num_heads * cfg_.head_dim, NK = cfg_.num_kv_heads * cfg_.head_dim;
  const std::int64_t V = cfg_.vocab_size;
  workspace& w = *ws_;
  const auto act = static_cast<std::int64_t>(gpu::dtype_size(dev_.compute_dtype()));
  auto grow = [&](gpu::device_buffer& b, std::int64_t bytes) {
    if (static_cast<std::int64_t>(b.size_bytes()) < bytes) {
      b = dev_.allocate(static_cast<std::size_t>(bytes));
    }
  };
  if (T > w.tokens) {
    w.tokens = T;
    for (auto* b : {&w.x, &w.h, &w.o}) grow(*b, T * H * act);
    for (auto* b : {&w.q, &w.attn}) grow(*b, T * NQ * act);
    for (auto* b : {&w.k, &w.v}) grow(*b, T * NK * act);
    for (auto* b : {&w.gate, &w.up, &w.act}) grow(*b, T * I * act);
  }
  if (S > w.seqs) w.seqs = S;
  if (R > w.logit_rows) {
    w.logit_rows = R;
    grow(w.picked, R * H * act);
    grow(w.logits, R * V * 4);  // logits are f32 on every device
  }
  grow(w.sample_logits, gathered * V * 4);
  // ids, positions, slots, token_seq [T]; kv_len [S]; tables; logit_index [R]; sample_index [P].
  grow(w.meta, 4 * (4 * meta_pad(T) + meta_pad(S) + meta_pad(table_entries) + meta_pad(R) +
                    meta_pad(P)));
}

std::size_t llama_model::reserve(gpu::workspace_limits limits) {
  if (limits.max_tokens < 1 || limits.max_seqs < 1 || limits.max_kv_len < 1 ||
      limits.block_size < 1) {
    throw std::invalid_argument("reserve: the step limits must be positive");
  }
  limits.max_sample_rows = std::min(std::max<std::int64_t>(limits.max_sample_rows, limits.max_seqs),
                                    limits.max_tokens);
  limits.vocab = cfg_.vocab_size;
  limits.num_q_heads = cfg_.num_heads;
  limits.num_kv_heads = cfg_.num_kv_heads;
  limits.head_dim = cfg_.head_dim;
  const std::int64_t blocks_per_seq = (limits.max_kv_len + limits.block_size - 1) / limits.block_size;
  // Every logits row the engine asks for is sampled (prompt logprobs aside), so nothing is
  // gathered apart.
  ensure_workspace(limits.max_tokens, limits.max_seqs, limits.max_sample_rows,
                   limits.max_sample_rows, 0, limits.max_seqs * blocks_per_seq);
  const workspace& w = *ws_;
  std::size_t bytes = 0;
  for (const gpu::device_buffer* b :
       {&w.x, &w.h, &w.q, &w.k, &w.v, &w.attn, &w.o, &w.gate, &w.up, &w.act, &w.meta, &w.picked,
        &w.logits, &w.sample_logits}) {
    bytes += b->size_bytes();
  }
  return bytes + dev_.reserve_workspace(limits);
}

forward_output llama_model::forward(const forward_batch& batch, kv_cache& cache) {
  validate(batch, cache);
  const std::int64_t H = cfg_.hidden_size, I = cfg_.intermediate_size, D = cfg_.head_dim;
  const std::int64_t NQ = cfg_.num_heads * D, NK = cfg_.num_kv_heads * D, V = cfg_.vocab_size;
  const std::int32_t bs = cache.block_size();

  // Host-side metadata of the ragged batch.
  std::vector<std::int32_t> ids, positions, slots, token_seq, kv_len, logit_index, sample_index;
  std::vector<std::int64_t> logits_begin(batch.rows.size(), -1);
  std::int32_t max_blocks = 1, max_kv = 0;
  for (const auto& row : batch.rows) {
    max_blocks = std::max<std::int32_t>(max_blocks, static_cast<std::int32_t>(row.block_table.size()));
  }
  std::vector<std::int32_t> tables(batch.rows.size() * max_blocks, 0);
  for (std::size_t r = 0; r < batch.rows.size(); ++r) {
    const forward_row& row = batch.rows[r];
    const std::int32_t n = static_cast<std::int32_t>(row.tokens.size());
    const std::int32_t first = static_cast<std::int32_t>(ids.size());
    for (std::int32_t i = 0; i < n; ++i) {
      const std::int32_t pos = row.start_pos + i;
      ids.push_back(static_cast<std::int32_t>(row.tokens[i]));
      positions.push_back(pos);
      slots.push_back(row.block_table[pos / bs] * bs + pos % bs);
      token_seq.push_back(static_cast<std::int32_t>(r));
    }
    kv_len.push_back(row.start_pos + n);
    max_kv = std::max(max_kv, row.start_pos + n);
    std::copy(row.block_table.begin(), row.block_table.end(), tables.begin() + r * max_blocks);
    if (row.logits == logits_mode::all) {
      logits_begin[r] = static_cast<std::int64_t>(logit_index.size());
      for (std::int32_t i = 0; i < n; ++i) logit_index.push_back(first + i);
    } else if (row.logits == logits_mode::last || row.sample) {
      logits_begin[r] = static_cast<std::int64_t>(logit_index.size());
      const std::int32_t m = row.sample ? row.num_sample : 1;
      for (std::int32_t i = n - m; i < n; ++i) logit_index.push_back(first + i);
    }
    if (row.sample) {
      const std::int64_t first_sampled =
          logits_begin[r] + (row.logits == logits_mode::all ? n - row.num_sample : 0);
      for (std::int32_t j = 0; j < row.num_sample; ++j) {
        sample_index.push_back(static_cast<std::int32_t>(first_sampled + j));
      }
    }
  }
  const std::int64_t T = static_cast<std::int64_t>(ids.size());
  const std::int64_t R = static_cast<std::int64_t>(logit_index.size());
  const std::int64_t S = static_cast<std::int64_t>(batch.rows.size());

  const auto P = static_cast<std::int64_t>(sample_index.size());
  ensure_workspace(T, S, R, P, P != R ? P : 0, static_cast<std::int64_t>(tables.size()));
  workspace& w = *ws_;
  std::vector<std::int32_t> packed;
  packed.reserve(static_cast<std::size_t>(4 * meta_pad(T) + meta_pad(S) +
                                          meta_pad(static_cast<std::int64_t>(tables.size())) +
                                          meta_pad(R) + meta_pad(P)));
  const std::int64_t at_ids = pack(packed, ids), at_positions = pack(packed, positions),
                     at_slots = pack(packed, slots), at_token_seq = pack(packed, token_seq),
                     at_kv_len = pack(packed, kv_len), at_tables = pack(packed, tables),
                     at_logit_index = pack(packed, logit_index),
                     at_sample_index = pack(packed, sample_index);
  dev_.upload(w.meta.data(), packed.data(), packed.size() * sizeof(std::int32_t));
  const auto* meta = static_cast<const std::int32_t*>(w.meta.data());

  const gpu::dtype ct = dev_.compute_dtype(), wt = dev_.weight_dtype();
  auto A = [&](const gpu::device_buffer& b, std::int64_t rows, std::int64_t cols) {
    return b.view(ct, rows, cols);
  };
  auto W = [&](const gpu::device_buffer& b, std::int64_t rows, std::int64_t cols) {
    return b.view(wt, rows, cols);
  };
  const gpu::tensor_view none{};
  const std::int32_t* ip = meta + at_ids;
  gpu::attention_batch ab;
  ab.token_seq = meta + at_token_seq;
  ab.positions = meta + at_positions;
  ab.slot_mapping = meta + at_slots;
  ab.seq_kv_len = meta + at_kv_len;
  ab.block_tables = meta + at_tables;
  ab.num_tokens = static_cast<std::int32_t>(T);
  ab.num_seqs = static_cast<std::int32_t>(S);
  ab.max_blocks_per_seq = max_blocks;
  ab.block_size = bs;
  ab.max_kv_len = max_kv;

  const auto x = A(w.x, T, H), h = A(w.h, T, H), o = A(w.o, T, H);
  const auto q = A(w.q, T, NQ), k = A(w.k, T, NK), v = A(w.v, T, NK), attn = A(w.attn, T, NQ);
  const auto gate = A(w.gate, T, I), upv = A(w.up, T, I), actv = A(w.act, T, I);
  const float eps = static_cast<float>(cfg_.rms_norm_eps);
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));

  dev_.embedding(ip, W(embed_, V, H), x);
  for (std::int32_t li = 0; li < cfg_.num_layers; ++li) {
    const layer& L = layers_[li];
    if (li == 0) {
      dev_.rms_norm(x, W(L.input_norm, 1, H), eps, h);
    } else {
      dev_.add_rms_norm(x, o, W(L.input_norm, 1, H), eps, h);  // o: previous layer's MLP out
    }
    dev_.linear(h, W(L.q, NQ, H), L.q_bias ? W(L.q_bias, 1, NQ) : none, q);
    dev_.linear(h, W(L.k, NK, H), L.k_bias ? W(L.k_bias, 1, NK) : none, k);
    dev_.linear(h, W(L.v, NK, H), L.v_bias ? W(L.v_bias, 1, NK) : none, v);
    if (cfg_.qk_norm) {
      dev_.head_rms_norm(q, static_cast<std::int32_t>(D), W(L.q_norm, 1, D), eps);
      dev_.head_rms_norm(k, static_cast<std::int32_t>(D), W(L.k_norm, 1, D), eps);
    }
    dev_.rope(q, k, static_cast<std::int32_t>(D), ab.positions,
              static_cast<const float*>(inv_freq_.data()));
    const gpu::kv_cache_view kv = cache.layer(li);
    dev_.kv_write(k, v, ab.slot_mapping, kv);
    dev_.attention(q, kv, ab, scale, attn);
    dev_.linear(attn, W(L.o, H, NQ), none, o);
    dev_.add_rms_norm(x, o, W(L.post_norm, 1, H), eps, h);
    dev_.linear(h, W(L.gate, I, H), none, gate);
    dev_.linear(h, W(L.up, I, H), none, upv);
    dev_.silu_mul(gate, upv, actv);
    dev_.linear(actv, W(L.down, H, I), none, o);
  }
  forward_output out;
  out.rows.resize(batch.rows.size());
  if (R == 0) return out;
  dev_.add_rms_norm(x, o, W(final_norm_, 1, H), eps, h);
  const auto picked = A(w.picked, R, H);
  dev_.gather_rows(h, meta + at_logit_index, picked);
  const auto logits = w.logits.view(gpu::dtype::f32, R, V);
  dev_.linear(picked, W(lm_head_ ? lm_head_ : embed_, V, H), none, logits);

  if (!sample_index.empty()) {
    gpu::sampling_batch sb;
    sb.penalty_tokens = batch.penalty_tokens;
    for (const auto& row : batch.rows) {
      if (!row.sample) continue;
      for (std::int32_t j = 0; j < row.num_sample; ++j) {
        sb.rows.push_back(row.sampling);
        sb.rows.back().draw_index += static_cast<std::uint64_t>(j);
      }
    }
    gpu::tensor_view sl = logits;
    if (static_cast<std::int64_t>(sample_index.size()) != R) {
      sl = w.sample_logits.view(gpu::dtype::f32, static_cast<std::int64_t>(sample_index.size()), V);
      dev_.gather_rows(logits, meta + at_sample_index, sl);
    }
    std::vector<gpu::sample_result> res = dev_.sample(sl, sb);
    std::size_t j = 0;
    for (std::size_t r = 0; r < batch.rows.size(); ++r) {
      if (!batch.rows[r].sample) continue;
      for (std::int32_t k = 0; k < batch.rows[r].num_sample; ++k) {
        out.rows[r].samples.push_back(std::move(res[j++]));
      }
    }
  }
  {
    for (std::size_t r = 0; r < batch.rows.size(); ++r) {
      if (logits_begin[r] < 0 || !(batch.return_logits || batch.rows[r].return_logits)) continue;
      const forward_row& row = batch.rows[r];
      const std::int64_t n = row.logits == logits_mode::all
                                 ? static_cast<std::int64_t>(row.tokens.size())
                                 : (row.sample ? row.num_sample : 1);
      out.rows[r].logits.resize(static_cast<std::size_t>(n * V));
      dev_.download(out.rows[r].logits.data(),
                    static_cast<const float*>(w.logits.data()) + logits_begin[r] * V,
                    n * V * sizeof(float));
    }
  }
  return out;
}

}  // namespace courier::model
