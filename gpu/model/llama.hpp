#pragma once
// The Llama-family decoder (Llama 2/3, Qwen2/2.5, Qwen3), written once against the device
// interface: embedding, per layer [residual + RMSNorm, fused QKV linear (+bias), q/k norm + RoPE
// + paged KV write (one op), attention, O, residual + RMSNorm, fused gate/up linear, SiLU-mul,
// down], final norm, lm_head, sampling. Weights: llama_weights.cpp; the forward: llama.cpp.
#include <cstdint>
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
  // A model of cfg's shape with random weights made on the device (gpu/random_fill.hpp): linear
  // weights uniform in +-1/sqrt(fan_in), norms near 1, biases near 0; the same seed gives the
  // same weights. For benchmarks, which need the shape and not the values.
  static std::unique_ptr<llama_model> random(model_config cfg, gpu::device& dev,
                                             std::uint64_t seed);

  const model_config& config() const { return cfg_; }
  gpu::device& device() const { return dev_; }
  std::size_t weight_bytes() const { return weight_bytes_; }

  // One forward pass over a ragged batch. Every row's block table must cover its tokens and
  // the cache must hold every earlier position of the row. Throws std::invalid_argument on a
  // malformed batch (checked before anything runs).
  forward_output forward(const forward_batch& batch, kv_cache& cache);

  // The memory plan: allocates the activation workspace and the device's own (attention,
  // sampling) for any step within `limits` (its max_tokens, max_seqs, max_kv_len,
  // max_sample_rows and block_size are read; the heads and vocab come from the model), so that
  // forward() allocates no device memory for such a step. Returns the bytes this reserves, for
  // the KV cache to be sized from what is left. A step beyond the limits still runs and grows
  // the workspace: rows asking for every position's logits (prompt logprobs) are one such step.
  std::size_t reserve(gpu::workspace_limits limits);

  ~llama_model();

 private:
  struct layer;
  struct workspace;
  llama_model(gpu::device& dev, model_config cfg);
  // Makes every device weight through make(parts) in a fixed order, where parts lists the
  // checkpoint tensors ({name, shape}) stacked by rows into it: one, or q/k/v and gate/up.
  template <typename Make>
  void make_weights(Make&& make);
  void upload_inv_freq();
  void validate(const forward_batch& batch, const kv_cache& cache) const;
  // Grows the workspace to hold T tokens, S rows, R logits rows, P sampled positions (of which
  // gathered: those copied apart because P != R) and `table_entries` block-table entries.
  void ensure_workspace(std::int64_t T, std::int64_t S, std::int64_t R, std::int64_t P,
                        std::int64_t gathered, std::int64_t table_entries);

  gpu::device& dev_;  // Borrowed; outlives the model.
  model_config cfg_;
  std::vector<layer> layers_;
  gpu::device_buffer embed_, final_norm_, lm_head_;  // lm_head_ empty when tied
  gpu::device_buffer inv_freq_;
  std::size_t weight_bytes_ = 0;
  std::unique_ptr<workspace> ws_;  // sized by reserve(); grows only past its limits
};

}  // namespace courier::model
