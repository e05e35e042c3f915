#pragma once
// The Llama-family decoder (Llama 2/3, Qwen2/2.5, Qwen3), written once against the device
// interface: embedding, per layer [RMSNorm, QKV (+bias), q/k norm, RoPE, paged KV write,
// attention, O, residual, RMSNorm, SwiGLU MLP, residual], final norm, lm_head, sampling.
#include <memory>
#include <string>
#include <vector>

#include "gpu/device.hpp"
#include "gpu/model/forward_batch.hpp"
#include "gpu/model/kv_cache.hpp"
#include "gpu/model/model_config.hpp"

namespace courier::model {

class weight_store;

class llama_model {
 public:
  // Reads DIR (config.json, generation_config.json, safetensors) and uploads the weights.
  // Throws model_error naming the file and the problem (missing tensor, wrong shape or dtype).
  static std::unique_ptr<llama_model> load(const std::string& dir, gpu::device& dev);

  const model_config& config() const { return cfg_; }
  gpu::device& device() const { return dev_; }
  std::size_t weight_bytes() const { return weight_bytes_; }

  // One forward pass over a ragged batch. Every row's block table must cover its tokens and
  // the cache must hold every earlier position of the row. Throws std::invalid_argument on a
  // malformed batch (checked before anything runs).
  forward_output forward(const forward_batch& batch, kv_cache& cache);

  ~llama_model();

 private:
  struct layer;
  struct workspace;
  llama_model(gpu::device& dev, model_config cfg);
  void load_weights(const weight_store& ws);
  void validate(const forward_batch& batch, const kv_cache& cache) const;

  gpu::device& dev_;  // Borrowed; outlives the model.
  model_config cfg_;
  std::vector<layer> layers_;
  gpu::device_buffer embed_, final_norm_, lm_head_;  // lm_head_ empty when tied
  gpu::device_buffer inv_freq_;
  std::size_t weight_bytes_ = 0;
  std::unique_ptr<workspace> ws_;  // grows with the largest batch seen, reused across steps
};

}  // namespace courier::model
