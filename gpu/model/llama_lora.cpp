// llama_model's LoRA pool: per linear an adapter may target, every slot's A and B on the device
// (gpu::lora_weights), written by load_lora and applied after the linear by apply_lora.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "gpu/model/llama.hpp"
#include "gpu/model/llama_layer.hpp"

namespace courier::model {

namespace {

// The f32 values in the device's weight dtype, as bytes to upload.
std::vector<unsigned char> to_weight_dtype(const std::vector<float>& v, gpu::dtype t) {
  std::vector<unsigned char> out(v.size() * gpu::dtype_size(t));
  if (t == gpu::dtype::f32) {
    std::memcpy(out.data(), v.data(), out.size());
    return out;
  }
  auto* h = reinterpret_cast<std::uint16_t*>(out.data());
  for (std::size_t i = 0; i < v.size(); ++i) {
    h[i] = t == gpu::dtype::bf16 ? gpu::f32_to_bf16(v[i]) : gpu::f32_to_f16(v[i]);
  }
  return out;
}

}  // namespace

std::size_t llama_model::reserve_loras(std::int32_t slots, std::int32_t max_rank) {
  if (slots < 1 || max_rank < 1 || lora_slots_ > 0) {
    throw std::invalid_argument("reserve_loras: slots and rank must be positive, once");
  }
  const gpu::dtype wt = dev_.weight_dtype();
  const std::size_t elem = gpu::dtype_size(wt);
  std::size_t bytes = 0;
  for (std::int32_t li = 0; li < cfg_.num_layers; ++li) {
    for (const lora_target& t : lora_targets(shard_, li)) {  // this rank's widths
      lora_pool& p = layers_[static_cast<std::size_t>(li)].lora[static_cast<std::size_t>(t.linear)];
      const auto parts = static_cast<std::int64_t>(t.modules.size());
      const std::int64_t a_rows = slots * parts * max_rank, b_rows = slots * t.out;
      p.a = dev_.allocate(static_cast<std::size_t>(a_rows * t.in) * elem);
      p.b = dev_.allocate(static_cast<std::size_t>(b_rows * max_rank) * elem);
      dev_.fill_zero(p.a.data(), p.a.size_bytes());
      dev_.fill_zero(p.b.data(), p.b.size_bytes());
      p.w.a = p.a.view(wt, a_rows, t.in);
      p.w.b = p.b.view(wt, b_rows, max_rank);
      p.w.slots = slots;
      p.w.parts = static_cast<std::int32_t>(parts);
      p.w.rank = max_rank;
      std::copy(t.part_end.begin(), t.part_end.end(), p.w.part_end);
      p.targeted.assign(static_cast<std::size_t>(slots), false);
      bytes += p.a.size_bytes() + p.b.size_bytes();
    }
  }
  lora_slots_ = slots;
  lora_rank_ = max_rank;
  ensure_workspace(0, 0, 0, 0, 0, 0);  // graphs captured before are dropped if it moves
  return bytes + ws_->lora_tmp.size_bytes();
}

void llama_model::load_lora(std::int32_t slot, const lora_adapter& adapter) {
  if (slot < 0 || slot >= lora_slots_ || adapter.rank > lora_rank_ ||
      adapter.layers.size() != static_cast<std::size_t>(cfg_.num_layers)) {
    throw std::invalid_argument(fmt::format(
        "load_lora: adapter {} (rank {}, {} layers) does not fit slot {} of {} (rank {})",
        adapter.name, adapter.rank, adapter.layers.size(), slot, lora_slots_, lora_rank_));
  }
  const gpu::dtype wt = dev_.weight_dtype();
  const std::int64_t R = lora_rank_, r = adapter.rank;
  for (std::int32_t li = 0; li < cfg_.num_layers; ++li) {
    const std::vector<lora_target> full = lora_targets(cfg_, li);
    const std::vector<lora_target> mine = lora_targets(shard_, li);  // this rank's widths
    for (std::size_t ti = 0; ti < mine.size(); ++ti) {
      const lora_target& t = mine[ti];
      const lora_target& tf = full[ti];
      lora_pool& p = layers_[static_cast<std::size_t>(li)].lora[static_cast<std::size_t>(t.linear)];
      const auto& parts =
          adapter.layers[static_cast<std::size_t>(li)][static_cast<std::size_t>(t.linear)].parts;
      const auto P = static_cast<std::int64_t>(t.modules.size());
      const tp_range cols = lora_cols(t.linear, tf.in);  // A's columns this rank reads
      // Zeros past the adapter's rank and in the parts it does not target.
      std::vector<float> a(static_cast<std::size_t>(P * R * t.in), 0.0f);
      std::vector<float> b(static_cast<std::size_t>(t.out * R), 0.0f);
      bool any = false;
      for (std::int64_t q = 0; q < static_cast<std::int64_t>(parts.size()); ++q) {
        const lora_adapter::part& part = parts[static_cast<std::size_t>(q)];
        if (part.a.empty()) continue;
        any = true;
        for (std::int64_t k = 0; k < r; ++k) {
          std::copy_n(part.a.begin() + k * tf.in + cols.begin, t.in,
                      a.begin() + (q * R + k) * t.in);
        }
        const auto qs = static_cast<std::size_t>(q);
        const std::int64_t full_begin = q ? tf.part_end[qs - 1] : 0;
        std::int64_t c = q ? t.part_end[qs - 1] : 0;  // this rank's row, in its linear
        for (const tp_range& rows : lora_rows(t.linear, qs, tf.part_end[qs] - full_begin)) {
          for (std::int64_t m = rows.begin; m < rows.end(); ++m, ++c) {
            std::copy_n(part.b.begin() + m * r, r, b.begin() + c * R);
          }
        }
      }
      const std::vector<unsigned char> da = to_weight_dtype(a, wt), db = to_weight_dtype(b, wt);
      dev_.upload(static_cast<char*>(p.a.data()) + static_cast<std::size_t>(slot) * da.size(),
                  da.data(), da.size());
      dev_.upload(static_cast<char*>(p.b.data()) + static_cast<std::size_t>(slot) * db.size(),
                  db.data(), db.size());
      p.targeted[static_cast<std::size_t>(slot)] = any;
    }
  }
}

std::vector<tp_range> llama_model::lora_rows(lora_linear l, std::size_t part,
                                             std::int64_t rows) const {
  if (tp_.size == 1) return {{0, rows}};
  const std::int64_t D = cfg_.head_dim;
  auto times = [](tp_range r, std::int64_t by) { return tp_range{r.begin * by, r.count * by}; };
  switch (l) {
    case lora_linear::qkv: return {times(part == 0 ? tp_.q_heads : tp_.kv_heads, D)};
    case lora_linear::gate_up:
    case lora_linear::up: return {tp_.ffn};
    case lora_linear::in_proj: return mamba_in_proj_rows(cfg_, tp_);  // as the weights split
    default: return {{0, rows}};  // row-parallel: every output row, partial sums
  }
}

tp_range llama_model::lora_cols(lora_linear l, std::int64_t in) const {
  if (tp_.size == 1) return {0, in};
  switch (l) {
    case lora_linear::o: return {tp_.q_heads.begin * cfg_.head_dim, tp_.q_heads.count * cfg_.head_dim};
    case lora_linear::down: return tp_.ffn;
    case lora_linear::out_proj:
      return {tp_.mamba_heads.begin * cfg_.mamba.head_dim,
              tp_.mamba_heads.count * cfg_.mamba.head_dim};
    default: return {0, in};  // column-parallel: the whole input
  }
}

void llama_model::apply_lora(const layer& L, lora_linear l, gpu::tensor_view x,
                             gpu::tensor_view out, const step_meta& m) {
  if (!m.lora_slots) return;
  const lora_pool& p = L.lora[static_cast<std::size_t>(l)];
  // A graph keeps every pool's op: an adapter loaded after its capture may target any of them.
  if (!p.a || (!m.every_lora && !p.any())) return;
  dev_.lora_apply(
      x, p.w, m.lora_slots,
      ws_->lora_tmp.view(gpu::dtype::f32, m.T, 3 * static_cast<std::int64_t>(lora_rank_)), out);
}

}  // namespace courier::model
