#pragma once
// Graphs for a device that has none of its own (the sim): capture() records each op the body
// calls, with its arguments, instead of running it; replay() calls them again on the inner device.
// It holds the capture contract as a CUDA graph does, and more strictly: an upload, download,
// allocation or sample while recording throws, and an op is replayed with exactly the pointers,
// sizes and plans it was recorded with. So a model whose graph steps are right on the sim reads
// everything that changes between steps from device memory, as a CUDA graph needs.
#include <functional>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "gpu/forwarding_device.hpp"

namespace courier::gpu {

class recording_device final : public forwarding_device {
 public:
  explicit recording_device(std::unique_ptr<device> inner) : forwarding_device(std::move(inner)) {}

  std::unique_ptr<device_graph> capture(const std::function<void()>& body) override {
    if (recording_) throw std::logic_error("recording device: capture inside a capture");
    std::vector<std::function<void()>> ops;
    recording_ = &ops;
    try {
      body();
    } catch (...) {
      recording_ = nullptr;
      throw;
    }
    recording_ = nullptr;
    return std::make_unique<recorded_graph>(std::move(ops));
  }

  device_buffer allocate(std::size_t n) override {
    forbid("allocate");
    return forwarding_device::allocate(n);
  }
  void upload(void* dst, const void* src, std::size_t n) override {
    forbid("upload");
    forwarding_device::upload(dst, src, n);
  }
  void download(void* dst, const void* src, std::size_t n) override {
    forbid("download");
    forwarding_device::download(dst, src, n);
  }
  std::vector<sample_result> sample(tensor_view logits, const sampling_batch& batch) override {
    forbid("sample");
    return forwarding_device::sample(logits, batch);
  }
  std::shared_ptr<pending_samples> sample_async(tensor_view logits, const sampling_batch& batch,
                                                std::int32_t* tokens_out) override {
    forbid("sample");
    return forwarding_device::sample_async(logits, batch, tokens_out);
  }

  void embedding(const std::int32_t* ids, tensor_view table, tensor_view out) override {
    op([=] { inner().embedding(ids, table, out); });
  }
  void rms_norm(tensor_view x, tensor_view w, float eps, tensor_view out) override {
    op([=] { inner().rms_norm(x, w, eps, out); });
  }
  void add_rms_norm(tensor_view residual, tensor_view x, tensor_view w, float eps,
                    tensor_view out) override {
    op([=] { inner().add_rms_norm(residual, x, w, eps, out); });
  }
  void linear(tensor_view x, tensor_view w, tensor_view bias, tensor_view out) override {
    op([=] { inner().linear(x, w, bias, out); });
  }
  void qkv_rope_kv_write(tensor_view qkv, std::int32_t num_q_heads, std::int32_t num_kv_heads,
                         std::int32_t head_dim, tensor_view q_norm, tensor_view k_norm, float eps,
                         const std::int32_t* positions, const float* inv_freq,
                         const std::int32_t* slot_mapping, kv_cache_view cache,
                         tensor_view q_out) override {
    op([=] {
      inner().qkv_rope_kv_write(qkv, num_q_heads, num_kv_heads, head_dim, q_norm, k_norm, eps,
                                positions, inv_freq, slot_mapping, cache, q_out);
    });
  }
  void attention(tensor_view q, kv_cache_view cache, const attention_batch& batch, float scale,
                 tensor_view out) override {
    op([=] { inner().attention(q, cache, batch, scale, out); });
  }
  void silu_mul(tensor_view gate_up, tensor_view out) override {
    op([=] { inner().silu_mul(gate_up, out); });
  }
  void gather_rows(tensor_view x, const std::int32_t* rows, tensor_view out) override {
    op([=] { inner().gather_rows(x, rows, out); });
  }
  void copy_tokens(const std::int32_t* src, const std::int32_t* src_index, std::int32_t* dst,
                   const std::int32_t* dst_index, std::int32_t n) override {
    op([=] { inner().copy_tokens(src, src_index, dst, dst_index, n); });
  }

 private:
  class recorded_graph final : public device_graph {
   public:
    explicit recorded_graph(std::vector<std::function<void()>> ops) : ops_(std::move(ops)) {}
    void replay() override {
      for (const auto& f : ops_) f();
    }

   private:
    std::vector<std::function<void()>> ops_;
  };

  template <typename F>
  void op(F&& f) {
    if (recording_) {
      recording_->emplace_back(std::forward<F>(f));
    } else {
      f();
    }
  }
  void forbid(const char* what) const {
    if (recording_) {
      throw std::logic_error(std::string("recording device: ") + what + " while capturing a graph");
    }
  }

  std::vector<std::function<void()>>* recording_ = nullptr;  // Borrowed: set while capturing.
};

}  // namespace courier::gpu
