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

  std::shared_ptr<pending_copies> copy_async(std::vector<copy_span> spans) override {
    forbid("copy_async");
    return forwarding_device::copy_async(std::move(spans));
  }

  // Every stream op (gpu/stream_ops.hpp) is recorded while capturing, else run.
#define COURIER_RECORD_STREAM_OP(name, params, args) \
  void name params override {                        \
    op([=] { inner().name args; });                  \
  }
  COURIER_STREAM_OPS(COURIER_RECORD_STREAM_OP)
#undef COURIER_RECORD_STREAM_OP

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
