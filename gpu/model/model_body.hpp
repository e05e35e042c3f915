#pragma once
// Internal to the llama_model sources: one architecture's layers behind the model, chosen once
// at load from model_config (make_body): the checkpoint tensors its weights are made of, and its
// layer loop from the embedding to lm_head. What every architecture shares is llama_model's and
// a body reaches it through the model it is given: the embedding, the input norm, an attention
// layer, the final norm and lm_head (llama_body.cpp), LoRA, the workspace and the per-sequence
// states. A new architecture is a body (and its config parsing); nothing else in the model
// branches on it.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpu/model/kv_cache.hpp"
#include "gpu/model/llama.hpp"
#include "gpu/model/tensor_parallel.hpp"

namespace courier::model {

// One checkpoint tensor of a device weight: its name, the shape config.json gives it, and the
// slice of it this tensor-parallel rank holds (rows, and columns of a matrix; count 0: all).
struct weight_part {
  std::string name;
  std::vector<std::int64_t> shape;
  tp_range rows{}, cols{};
};

// Makes one device weight of `parts` stacked by rows: read from the checkpoint and checked
// (llama_model::load), or filled at random (llama_model::random).
using weight_maker = std::function<gpu::device_buffer(const std::vector<weight_part>&)>;

class model_body {
 public:
  virtual ~model_body() = default;
  // The model's embedding, final norm, lm_head (unless tied) and layers, each made by `take` in
  // a fixed order; under tensor parallelism each part names this rank's slice.
  virtual void make_weights(llama_model& m, const weight_maker& take) const = 0;
  // Embedding through lm_head for the step `s` describes: logits rows [0, s.R) of the
  // workspace. Everything it reads that changes between steps is in device memory, so a decode
  // graph can capture it.
  virtual void run(llama_model& m, const llama_model::step_meta& s, kv_cache& cache) const = 0;
};

// The Llama family (Llama, Qwen2, Qwen3): llama_body.cpp.
class llama_family_body final : public model_body {
 public:
  void make_weights(llama_model& m, const weight_maker& take) const override;
  void run(llama_model& m, const llama_model::step_meta& s, kv_cache& cache) const override;
};

// NemotronH hybrids (Mamba-2, attention and MLP blocks): hybrid_body.cpp.
class nemotron_h_body final : public model_body {
 public:
  void make_weights(llama_model& m, const weight_maker& take) const override;
  void run(llama_model& m, const llama_model::step_meta& s, kv_cache& cache) const override;
};

inline std::unique_ptr<const model_body> make_body(const model_config& cfg) {
  if (cfg.hybrid()) return std::make_unique<nemotron_h_body>();
  return std::make_unique<llama_family_body>();
}

}  // namespace courier::model
