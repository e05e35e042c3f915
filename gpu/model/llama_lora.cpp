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
  if (tp_.size > 1) {
    throw model_error(fmt::format(
        "LoRA adapters are not split across tensor-parallel ranks yet ({} ranks)", tp_.size));
  }
  const gpu::dtype wt = dev_.weight_dtype();
  const std::size_t elem = gpu::dtype_size(wt);
  std::size_t bytes = 0;
  for (std::int32_t li = 0; li < cfg_.num_layers; ++li) {
    for (const lora_target& t : lora_targets(cfg_, li)) {
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
    for (const lora_target& t : lora_targets(cfg_, li)) {
      lora_pool& p = layers_[static_cast<std::size_t>(li)].lora[static_cast<std::size_t>(t.linear)];
      const auto& parts =
          adapter.layers[static_cast<std::size_t>(li)][static_cast<std::size_t>(t.linear)].parts;
      const auto P = static_cast<std::int64_t>(t.modules.size());
      // Zeros past the adapter's rank and in the parts it does not target.
      std::vector<float> a(static_cast<std::size_t>(P * R * t.in), 0.0f);
      std::vector<float> b(static_cast<std::size_t>(t.out * R), 0.0f);
      bool any = false;
      for (std::int64_t q = 0; q < static_cast<std::int64_t>(parts.size()); ++q) {
        const lora_adapter::part& part = parts[static_cast<std::size_t>(q)];
        if (part.a.empty()) continue;
        any = true;
        std::copy(part.a.begin(), part.a.end(), a.begin() + q * R * t.in);
        const std::int64_t begin = q ? t.part_end[static_cast<std::size_t>(q) - 1] : 0;
        const std::int64_t end = t.part_end[static_cast<std::size_t>(q)];
        for (std::int64_t c = begin; c < end; ++c) {
          std::copy_n(part.b.begin() + (c - begin) * r, r, b.begin() + c * R);
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
