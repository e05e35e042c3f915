// The weights of llama_model: from a Hugging Face folder (load) or random on the device (random).
// Projections that read the same input are fused at load (llama_layer.hpp): q, k and v into one
// [NQ + 2 * NK, H] matrix, gate and up into one [2 * I, H], so the forward pass runs one linear
// for each. The checkpoint's tensors are still checked one by one, by name.
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "gpu/model/llama.hpp"
#include "gpu/model/json_file.hpp"
#include "gpu/model/llama_layer.hpp"
#include "gpu/model/model_body.hpp"
#include "gpu/model/safetensors.hpp"
#include "gpu/model/tensor_parallel.hpp"

namespace courier::model {

namespace {

using detail::shape_str;

// The shape of p's slice.
std::vector<std::int64_t> sliced_shape(const weight_part& p) {
  std::vector<std::int64_t> s = p.shape;
  if (p.rows.count > 0) s[0] = p.rows.count;
  if (p.cols.count > 0) s[1] = p.cols.count;
  return s;
}

// Tensor t's slice p.rows x p.cols, in `storage` (t itself when p takes all of it).
gpu::host_tensor slice_of(const gpu::host_tensor& t, const weight_part& p,
                          std::vector<unsigned char>& storage) {
  if (p.rows.count == 0 && p.cols.count == 0) return t;
  gpu::host_tensor out = t;
  out.shape = sliced_shape(p);
  const std::int64_t elem = static_cast<std::int64_t>(gpu::dtype_size(t.type));
  const std::int64_t cols = t.numel() / t.shape[0];  // a row of t, in elements
  const std::int64_t first_col = p.cols.count > 0 ? p.cols.begin : 0;
  const std::int64_t row_elems = out.numel() / out.shape[0];
  out.size_bytes = static_cast<std::size_t>(out.numel() * elem);
  storage.resize(out.size_bytes);
  const std::int64_t first_row = p.rows.count > 0 ? p.rows.begin : 0;
  for (std::int64_t r = 0; r < out.shape[0]; ++r) {
    std::memcpy(storage.data() + r * row_elems * elem,
                static_cast<const unsigned char*>(t.data) + ((first_row + r) * cols + first_col) * elem,
                static_cast<std::size_t>(row_elems * elem));
  }
  out.data = storage.data();
  return out;
}


std::int64_t numel(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

bool ends_with(const std::string& s, const char* suffix) {
  const std::size_t n = std::strlen(suffix);
  return s.size() > n && s.compare(s.size() - n, n, suffix) == 0;
}

// The tensors stacked along their first dimension (their other dimensions agree), in `storage`:
// their bytes one after the other when the dtypes agree, else each widened to f32.
gpu::host_tensor stack_rows(const std::vector<const gpu::host_tensor*>& parts,
                            std::vector<unsigned char>& storage) {
  gpu::host_tensor out;
  out.type = parts[0]->type;
  out.shape = parts[0]->shape;
  out.shape[0] = 0;
  for (const gpu::host_tensor* t : parts) {
    out.shape[0] += t->shape[0];
    if (t->type != out.type) out.type = gpu::dtype::f32;
  }
  out.size_bytes = static_cast<std::size_t>(out.numel()) * gpu::dtype_size(out.type);
  storage.resize(out.size_bytes);
  unsigned char* at = storage.data();
  for (const gpu::host_tensor* t : parts) {
    if (t->type == out.type) {
      std::memcpy(at, t->data, t->size_bytes);
      at += t->size_bytes;
      continue;
    }
    for (std::int64_t i = 0; i < t->numel(); ++i) {  // bf16 or f16: not f32 here
      const std::uint16_t h = gpu::u16_at(t->data, static_cast<std::size_t>(i));
      const float f = t->type == gpu::dtype::bf16 ? gpu::bf16_to_f32(h) : gpu::f16_to_f32(h);
      std::memcpy(at, &f, sizeof f);
      at += sizeof f;
    }
  }
  out.data = storage.data();
  return out;
}

}  // namespace

std::unique_ptr<llama_model> llama_model::load(const std::string& dir, gpu::device& dev) {
  model_config cfg = load_model_config(dir);
  if (cfg.hybrid() && !dev.runs_mamba()) {
    throw model_error(fmt::format(
        "{}/config.json: {} is a hybrid model with Mamba-2 layers, which the {} backend does not "
        "run yet (the sim backend does)",
        dir, cfg.architecture_name, dev.name()));
  }
  const weight_store ws = weight_store::open(dir);
  std::unique_ptr<llama_model> m(new llama_model(dev, std::move(cfg)));
  m->body_->make_weights(*m, [&](const std::vector<weight_part>& parts) {
    std::vector<const gpu::host_tensor*> tensors;
    std::vector<std::vector<unsigned char>> slice_storage(parts.size());
    std::vector<gpu::host_tensor> slices(parts.size());
    for (const weight_part& p : parts) {
      const gpu::host_tensor& t = ws.tensor(p.name);
      if (t.type == gpu::dtype::i32) {
        throw model_error(
            fmt::format("{}: tensor {} has dtype I32; weights must be F32, BF16 or F16",
                        ws.file_of(p.name), p.name));
      }
      if (t.shape != p.shape) {
        throw model_error(fmt::format("{}: tensor {} has shape {}, expected {} from config.json",
                                      ws.file_of(p.name), p.name, shape_str(t.shape),
                                      shape_str(p.shape)));
      }
      const std::size_t i = tensors.size();
      slices[i] = slice_of(t, p, slice_storage[i]);
      m->weight_bytes_ += slices[i].size_bytes;  // this rank's
      tensors.push_back(&slices[i]);
    }
    if (tensors.size() == 1) return dev.load_weight(*tensors[0]);
    std::vector<unsigned char> storage;  // load_weight has copied it when it returns
    return dev.load_weight(stack_rows(tensors, storage));
  });
  m->upload_inv_freq();
  return m;
}

std::unique_ptr<llama_model> llama_model::random(model_config cfg, gpu::device& dev,
                                                 std::uint64_t seed) {
  if (cfg.hybrid()) {
    throw model_error(fmt::format("{}: courier does not run Mamba-2 layers yet",
                                  cfg.architecture_name));
  }
  std::unique_ptr<llama_model> m(new llama_model(dev, std::move(cfg)));
  const gpu::dtype wt = dev.weight_dtype();
  const auto elem = static_cast<std::int64_t>(gpu::dtype_size(wt));
  std::uint64_t index = 0;  // one seed per checkpoint tensor, in make_weights' order
  m->body_->make_weights(*m, [&](const std::vector<weight_part>& parts) {
    std::int64_t total = 0;
    for (const weight_part& p : parts) total += numel(sliced_shape(p));
    gpu::device_buffer b = dev.allocate(static_cast<std::size_t>(total * elem));
    m->weight_bytes_ += static_cast<std::size_t>(total * elem);
    std::int64_t at = 0;
    for (const weight_part& p : parts) {  // a rank's slice: its own values, as good as any
      const std::int64_t n = numel(sliced_shape(p));
      const bool norm = ends_with(p.name, "norm.weight");
      const bool bias = ends_with(p.name, "bias");
      const bool embed = p.name == "model.embed_tokens.weight";
      const float scale = norm    ? 0.1f
                          : bias  ? 0.02f
                          : embed ? 1.0f
                                  : 1.0f / std::sqrt(static_cast<float>(p.shape.back()));
      const gpu::tensor_view part{static_cast<char*>(b.data()) + at * elem, wt, 1, n};
      dev.fill_random(part, seed * 1000003u + index++, norm ? 1.0f : 0.0f, scale);
      at += n;
    }
    return b;
  });
  m->upload_inv_freq();
  dev.synchronize();
  return m;
}

void llama_model::upload_inv_freq() {
  // Without rotary embeddings (NemotronH's attention) every angle is 0: cos 1 and sin 0 rotate
  // nothing, exactly.
  const std::vector<float> inv =
      cfg_.rotary ? rope_inv_freq(cfg_)
                  : std::vector<float>(static_cast<std::size_t>(cfg_.head_dim / 2), 0.0f);
  inv_freq_ = dev_.allocate(inv.size() * sizeof(float));
  dev_.upload(inv_freq_.data(), inv.data(), inv.size() * sizeof(float));
}





}  // namespace courier::model
