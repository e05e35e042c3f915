#pragma once
// A device that forwards every call to another and counts allocations: tests of the memory plan
// assert that steps allocate nothing once the workspaces are reserved.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "gpu/device.hpp"

namespace courier::test {

class counting_device final : public gpu::device {
 public:
  explicit counting_device(std::unique_ptr<gpu::device> inner) : inner_(std::move(inner)) {}

  int num_allocations() const { return num_allocations_; }
  std::size_t reserved_bytes() const { return reserved_bytes_; }

  std::string name() const override { return inner_->name(); }
  gpu::dtype compute_dtype() const override { return inner_->compute_dtype(); }
  gpu::dtype weight_dtype() const override { return inner_->weight_dtype(); }
  std::size_t memory_budget_bytes() const override { return inner_->memory_budget_bytes(); }

  gpu::device_buffer allocate(std::size_t size_bytes) override {
    ++num_allocations_;
    // The inner buffer's memory is adopted: released through this device, which passes it on.
    gpu::device_buffer b = inner_->allocate(size_bytes);
    void* p = b.data();
    held_.push_back(std::move(b));
    return gpu::device_buffer(this, p, size_bytes);
  }
  void release(void* data) noexcept override {
    for (auto it = held_.begin(); it != held_.end(); ++it) {
      if (it->data() == data) {
        held_.erase(it);
        return;
      }
    }
  }
  void upload(void* dst, const void* src, std::size_t n) override { inner_->upload(dst, src, n); }
  void download(void* dst, const void* src, std::size_t n) override {
    inner_->download(dst, src, n);
  }
  void fill_zero(void* dst, std::size_t n) override { inner_->fill_zero(dst, n); }
  void synchronize() override { inner_->synchronize(); }
  gpu::device_buffer load_weight(const gpu::host_tensor& t) override {
    ++num_allocations_;
    gpu::device_buffer b = inner_->load_weight(t);
    void* p = b.data();
    const std::size_t n = b.size_bytes();
    held_.push_back(std::move(b));
    return gpu::device_buffer(this, p, n);
  }
  void fill_random(gpu::tensor_view out, std::uint64_t seed, float center, float scale) override {
    inner_->fill_random(out, seed, center, scale);
  }
  std::size_t reserve_workspace(const gpu::workspace_limits& limits) override {
    reserved_bytes_ = inner_->reserve_workspace(limits);
    last_limits_ = limits;
    return reserved_bytes_;
  }
  const gpu::workspace_limits& last_limits() const { return last_limits_; }

  void embedding(const std::int32_t* ids, gpu::tensor_view table, gpu::tensor_view out) override {
    inner_->embedding(ids, table, out);
  }
  void rms_norm(gpu::tensor_view x, gpu::tensor_view w, float eps, gpu::tensor_view out) override {
    inner_->rms_norm(x, w, eps, out);
  }
  void add_rms_norm(gpu::tensor_view residual, gpu::tensor_view x, gpu::tensor_view w, float eps,
                    gpu::tensor_view out) override {
    inner_->add_rms_norm(residual, x, w, eps, out);
  }
  void head_rms_norm(gpu::tensor_view x, std::int32_t head_dim, gpu::tensor_view w,
                     float eps) override {
    inner_->head_rms_norm(x, head_dim, w, eps);
  }
  void linear(gpu::tensor_view x, gpu::tensor_view w, gpu::tensor_view bias,
              gpu::tensor_view out) override {
    inner_->linear(x, w, bias, out);
  }
  void rope(gpu::tensor_view q, gpu::tensor_view k, std::int32_t head_dim,
            const std::int32_t* positions, const float* inv_freq) override {
    inner_->rope(q, k, head_dim, positions, inv_freq);
  }
  void kv_write(gpu::tensor_view k, gpu::tensor_view v, const std::int32_t* slot_mapping,
                gpu::kv_cache_view cache) override {
    inner_->kv_write(k, v, slot_mapping, cache);
  }
  void attention(gpu::tensor_view q, gpu::kv_cache_view cache, const gpu::attention_batch& batch,
                 float scale, gpu::tensor_view out) override {
    inner_->attention(q, cache, batch, scale, out);
  }
  void silu_mul(gpu::tensor_view gate, gpu::tensor_view up, gpu::tensor_view out) override {
    inner_->silu_mul(gate, up, out);
  }
  void gather_rows(gpu::tensor_view x, const std::int32_t* rows, gpu::tensor_view out) override {
    inner_->gather_rows(x, rows, out);
  }
  std::vector<gpu::sample_result> sample(gpu::tensor_view logits,
                                         const gpu::sampling_batch& batch) override {
    return inner_->sample(logits, batch);
  }

 private:
  std::unique_ptr<gpu::device> inner_;        // Owned.
  std::vector<gpu::device_buffer> held_;      // the inner buffers lent out, freed on release
  int num_allocations_ = 0;
  std::size_t reserved_bytes_ = 0;
  gpu::workspace_limits last_limits_;
};

}  // namespace courier::test
