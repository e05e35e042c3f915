#pragma once
// The simulated GPU: the device interface on the CPU, computing in f32 from f32 weights (bf16
// and f16 are widened exactly at load). It is the reference the CUDA backend is tested against.
//
// Invariants: every op's result for one token depends only on that token's inputs (and, for
// attention, on its sequence's cache), never on the rest of the batch or on the thread count,
// so outputs are bit-identical however requests are chunked and batched.
#include <memory>
#include <mutex>
#include <unordered_map>

#include "gpu/device.hpp"
#include "gpu/planned_attention.hpp"
#include "gpu/sim/copy_engine.hpp"
#include "gpu/sim/thread_pool.hpp"

namespace courier::gpu::sim {

class sim_device final : public device {
 public:
  // copy_latency: how long each copy_async batch takes at least (copy_engine).
  sim_device(int threads, std::size_t memory_mb,
             std::chrono::microseconds copy_latency = std::chrono::microseconds(0));

  std::string name() const override;
  bool runs_mamba() const override { return true; }
  dtype compute_dtype() const override { return dtype::f32; }
  dtype weight_dtype() const override { return dtype::f32; }
  std::size_t memory_budget_bytes() const override { return budget_bytes_; }

  device_buffer allocate(std::size_t size_bytes) override;
  void release(void* data) noexcept override;
  void upload(void* dst, const void* src, std::size_t size_bytes) override;
  void download(void* dst, const void* src, std::size_t size_bytes) override;
  void fill_zero(void* dst, std::size_t size_bytes) override;
  void synchronize() override {}
  device_buffer load_weight(const host_tensor& t) override;
  void fill_random(tensor_view out, std::uint64_t seed, float center, float scale) override;

  void embedding(const std::int32_t* ids, tensor_view table, std::int64_t first_id,
                 tensor_view out) override;
  void rms_norm(tensor_view x, tensor_view w, float eps, tensor_view out) override;
  void add_rms_norm(tensor_view residual, tensor_view x, tensor_view w, float eps,
                    tensor_view out) override;
  void linear(tensor_view x, tensor_view w, tensor_view bias, tensor_view out) override;
  void qkv_rope_kv_write(tensor_view qkv, std::int32_t num_q_heads, std::int32_t num_kv_heads,
                         std::int32_t head_dim, tensor_view q_norm, tensor_view k_norm, float eps,
                         const std::int32_t* positions, const float* inv_freq,
                         const std::int32_t* slot_mapping, kv_cache_view cache,
                         tensor_view q_out) override;
  // The sim computes each token's attention from its inputs alone and has nothing to plan; it
  // keeps what was planned and refuses an attention() that does not match it, as CUDA must.
  void plan_attention(const attention_batch& batch, std::int32_t num_q_heads,
                      std::int32_t num_kv_heads, std::int32_t head_dim) override;
  void attention(tensor_view q, kv_cache_view cache, const attention_batch& batch, float scale,
                 tensor_view out) override;
  void silu_mul(tensor_view gate_up, tensor_view out) override;
  void gather_rows(tensor_view x, const std::int32_t* rows, tensor_view out) override;
  std::vector<sample_result> sample(tensor_view logits, const sampling_batch& batch) override;
  void copy_tokens(const std::int32_t* src, const std::int32_t* src_index, std::int32_t* dst,
                   const std::int32_t* dst_index, std::int32_t n) override;
  void mamba_conv1d(tensor_view in, std::int64_t col_begin, tensor_view w, tensor_view bias,
                    float* states, const mamba_batch& batch, tensor_view out) override;
  void mamba_scan(tensor_view xbc, tensor_view proj, std::int64_t dt_col, tensor_view A_log,
                  tensor_view dt_bias, tensor_view D, const mamba_shape& shape, float* states,
                  const mamba_batch& batch, tensor_view y) override;
  void gated_rms_norm(tensor_view y, tensor_view gate, tensor_view w, std::int64_t group,
                      float eps, tensor_view out) override;
  void gated_square_sums(tensor_view y, tensor_view gate, std::int64_t col,
                         tensor_view sums) override;
  void gated_rms_norm_summed(tensor_view y, tensor_view gate, tensor_view w, tensor_view sums,
                             std::int64_t col, std::int64_t count, float eps,
                             tensor_view out) override;
  void relu2(tensor_view x, tensor_view out) override;
  void lora_apply(tensor_view x, const lora_weights& w, const std::int32_t* slots, tensor_view tmp,
                  tensor_view out) override;  // sim_lora.cpp
  void copy_device(void* dst, const void* src, std::size_t n) override;
  std::shared_ptr<pending_copies> copy_async(std::vector<copy_span> spans) override;
  void select_draft_states(const std::int32_t* sampled, const std::int32_t* ids,
                           const draft_states* rows, std::int32_t n, state_buffer conv,
                           state_buffer ssm) override;
  void count_penalty_tokens(const std::int32_t* tokens, const std::int32_t* src_index,
                            penalty_token* lists, std::int32_t* lens,
                            const std::int32_t* list_index, std::int32_t stride,
                            std::int32_t n) override;

 private:
  static constexpr std::size_t mmap_threshold = std::size_t{1} << 20;
  thread_pool pool_;
  std::size_t budget_bytes_;
  planned_attention planned_;
  copy_engine copies_;
  std::mutex mapped_mu_;  // buffers may be freed from any thread
  std::unordered_map<void*, std::size_t> mapped_;  // mmap'ed buffers and their lengths
};

}  // namespace courier::gpu::sim
