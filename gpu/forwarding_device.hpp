#pragma once
// A device that passes every call to another: the base of decorators that watch a device (tests
// counting allocations, bench-forward's per-op profile). Buffers come from the inner device and
// are released to it directly.
#include <memory>
#include <string>
#include <vector>

#include "gpu/device.hpp"

namespace courier::gpu {

class forwarding_device : public device {
 public:
  explicit forwarding_device(std::unique_ptr<device> inner) : inner_(std::move(inner)) {}

  device& inner() { return *inner_; }

  std::string name() const override { return inner_->name(); }
  dtype compute_dtype() const override { return inner_->compute_dtype(); }
  dtype weight_dtype() const override { return inner_->weight_dtype(); }
  std::size_t memory_budget_bytes() const override { return inner_->memory_budget_bytes(); }
  device_buffer allocate(std::size_t size_bytes) override { return inner_->allocate(size_bytes); }
  void release(void* data) noexcept override { inner_->release(data); }
  void upload(void* dst, const void* src, std::size_t n) override { inner_->upload(dst, src, n); }
  void download(void* dst, const void* src, std::size_t n) override {
    inner_->download(dst, src, n);
  }
  void fill_zero(void* dst, std::size_t n) override { inner_->fill_zero(dst, n); }
  void synchronize() override { inner_->synchronize(); }
  device_buffer load_weight(const host_tensor& t) override { return inner_->load_weight(t); }
  void fill_random(tensor_view out, std::uint64_t seed, float center, float scale) override {
    inner_->fill_random(out, seed, center, scale);
  }
  std::unique_ptr<device_graph> capture(const std::function<void()>& body) override {
    return inner_->capture(body);
  }
  std::unique_ptr<device_timestamp> timestamp() override { return inner_->timestamp(); }
  double elapsed_ms(const device_timestamp& a, const device_timestamp& b) override {
    return inner_->elapsed_ms(a, b);
  }
  std::size_t reserve_workspace(const workspace_limits& limits) override {
    return inner_->reserve_workspace(limits);
  }
  void embedding(const std::int32_t* ids, tensor_view table, tensor_view out) override {
    inner_->embedding(ids, table, out);
  }
  void rms_norm(tensor_view x, tensor_view w, float eps, tensor_view out) override {
    inner_->rms_norm(x, w, eps, out);
  }
  void add_rms_norm(tensor_view residual, tensor_view x, tensor_view w, float eps,
                    tensor_view out) override {
    inner_->add_rms_norm(residual, x, w, eps, out);
  }
  void linear(tensor_view x, tensor_view w, tensor_view bias, tensor_view out) override {
    inner_->linear(x, w, bias, out);
  }
  void qkv_rope_kv_write(tensor_view qkv, std::int32_t num_q_heads, std::int32_t num_kv_heads,
                         std::int32_t head_dim, tensor_view q_norm, tensor_view k_norm, float eps,
                         const std::int32_t* positions, const float* inv_freq,
                         const std::int32_t* slot_mapping, kv_cache_view cache,
                         tensor_view q_out) override {
    inner_->qkv_rope_kv_write(qkv, num_q_heads, num_kv_heads, head_dim, q_norm, k_norm, eps,
                              positions, inv_freq, slot_mapping, cache, q_out);
  }
  void attention(tensor_view q, kv_cache_view cache, const attention_batch& batch, float scale,
                 tensor_view out) override {
    inner_->attention(q, cache, batch, scale, out);
  }
  void silu_mul(tensor_view gate_up, tensor_view out) override { inner_->silu_mul(gate_up, out); }
  void gather_rows(tensor_view x, const std::int32_t* rows, tensor_view out) override {
    inner_->gather_rows(x, rows, out);
  }
  std::vector<sample_result> sample(tensor_view logits, const sampling_batch& batch) override {
    return inner_->sample(logits, batch);
  }
  std::shared_ptr<pending_samples> sample_async(tensor_view logits, const sampling_batch& batch,
                                                std::int32_t* tokens_out) override {
    return inner_->sample_async(logits, batch, tokens_out);
  }
  void copy_tokens(const std::int32_t* src, const std::int32_t* src_index, std::int32_t* dst,
                   const std::int32_t* dst_index, std::int32_t n) override {
    inner_->copy_tokens(src, src_index, dst, dst_index, n);
  }

 private:
  std::unique_ptr<device> inner_;  // Owned.
};

}  // namespace courier::gpu
