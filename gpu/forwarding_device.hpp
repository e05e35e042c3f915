#pragma once
// A device that passes every call to another: the base of decorators that watch a device (tests
// counting allocations, bench-forward's per-op profile). Buffers come from the inner device and
// are released to it directly.
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu/device.hpp"
#include "gpu/stream_ops.hpp"

namespace courier::gpu {

class forwarding_device : public device {
 public:
  explicit forwarding_device(std::unique_ptr<device> inner) : inner_(std::move(inner)) {}

  device& inner() { return *inner_; }

  std::string name() const override { return inner_->name(); }
  bool runs_mamba() const override { return inner_->runs_mamba(); }
  dtype compute_dtype() const override { return inner_->compute_dtype(); }
  dtype weight_dtype() const override { return inner_->weight_dtype(); }
  std::size_t memory_budget_bytes() const override { return inner_->memory_budget_bytes(); }
  std::shared_ptr<void> allocate_host(std::size_t size_bytes) override {
    return inner_->allocate_host(size_bytes);
  }
  std::shared_ptr<pending_copies> copy_async(std::vector<copy_span> spans) override {
    return inner_->copy_async(std::move(spans));
  }
  double compute_flops() const override { return inner_->compute_flops(); }
  double host_bytes_per_s() const override { return inner_->host_bytes_per_s(); }
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
  std::optional<work_counts> counted_work() const override { return inner_->counted_work(); }
  double elapsed_ms(const device_timestamp& a, const device_timestamp& b) override {
    return inner_->elapsed_ms(a, b);
  }
  void bind_thread() override { inner_->bind_thread(); }
  void join_group(std::shared_ptr<collectives> c) override {  // the inner device runs them
    inner_->join_group(c);
    device::join_group(std::move(c));
  }
  std::size_t reserve_workspace(const workspace_limits& limits) override {
    return inner_->reserve_workspace(limits);
  }
  // Every stream op (gpu/stream_ops.hpp), forwarded.
#define COURIER_FORWARD_STREAM_OP(name, params, args) \
  void name params override { inner_->name args; }
  COURIER_STREAM_OPS(COURIER_FORWARD_STREAM_OP)
#undef COURIER_FORWARD_STREAM_OP
  std::vector<sample_result> sample(tensor_view logits, const sampling_batch& batch) override {
    return inner_->sample(logits, batch);
  }
  std::shared_ptr<pending_samples> sample_async(tensor_view logits, const sampling_batch& batch,
                                                std::int32_t* tokens_out) override {
    return inner_->sample_async(logits, batch, tokens_out);
  }

 private:
  std::unique_ptr<device> inner_;  // Owned.
};

static_assert(!std::is_abstract_v<forwarding_device>,
              "a pure virtual op of gpu::device is missing from COURIER_STREAM_OPS "
              "(gpu/stream_ops.hpp), or forwarding_device does not forward it");

}  // namespace courier::gpu
