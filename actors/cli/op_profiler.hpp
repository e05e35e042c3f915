#pragma once
// bench-forward's per-op profile of a step: a device decorator that, while on, synchronizes
// before and after each op and adds the wall time to the op's total. On a GPU that is each
// kernel's time plus a synchronization (a few microseconds), so the profile shows where a step's
// time goes, while the step itself (measured with timing off) shows what the GPU does with no
// waits between kernels.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpu/forwarding_device.hpp"

namespace courier::cli {

class op_profiler final : public gpu::forwarding_device {
 public:
  using forwarding_device::forwarding_device;

  struct op_time {
    std::string op;
    std::int64_t calls = 0;
    double seconds = 0;
  };

  void start() {  // clears the totals and turns timing on
    totals_.clear();
    on_ = true;
  }
  void stop() { on_ = false; }
  // The ops timed since start(), the slowest first.
  std::vector<op_time> results() const;

  void upload(void* dst, const void* src, std::size_t n) override;
  void download(void* dst, const void* src, std::size_t n) override;
  void embedding(const std::int32_t* ids, gpu::tensor_view table, gpu::tensor_view out) override;
  void rms_norm(gpu::tensor_view x, gpu::tensor_view w, float eps, gpu::tensor_view out) override;
  void add_rms_norm(gpu::tensor_view residual, gpu::tensor_view x, gpu::tensor_view w, float eps,
                    gpu::tensor_view out) override;
  void linear(gpu::tensor_view x, gpu::tensor_view w, gpu::tensor_view bias,
              gpu::tensor_view out) override;
  void qkv_rope_kv_write(gpu::tensor_view qkv, std::int32_t num_q_heads, std::int32_t num_kv_heads,
                         std::int32_t head_dim, gpu::tensor_view q_norm, gpu::tensor_view k_norm,
                         float eps, const std::int32_t* positions, const float* inv_freq,
                         const std::int32_t* slot_mapping, gpu::kv_cache_view cache,
                         gpu::tensor_view q_out) override;
  void attention(gpu::tensor_view q, gpu::kv_cache_view cache, const gpu::attention_batch& batch,
                 float scale, gpu::tensor_view out) override;
  void silu_mul(gpu::tensor_view gate_up, gpu::tensor_view out) override;
  void gather_rows(gpu::tensor_view x, const std::int32_t* rows, gpu::tensor_view out) override;
  std::vector<gpu::sample_result> sample(gpu::tensor_view logits,
                                         const gpu::sampling_batch& batch) override;
  // Timed until the samples are on the host (timing waits for the device anyway).
  std::shared_ptr<gpu::pending_samples> sample_async(gpu::tensor_view logits,
                                                     const gpu::sampling_batch& batch,
                                                     std::int32_t* tokens_out) override;
  void copy_tokens(const std::int32_t* src, const std::int32_t* src_index, std::int32_t* dst,
                   const std::int32_t* dst_index, std::int32_t n) override;

 private:
  template <typename F>
  void timed(const char* op, F&& f) {
    if (!on_) return f();
    inner().synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    f();
    inner().synchronize();
    op_time& t = totals_[op];
    ++t.calls;
    t.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  bool on_ = false;
  std::map<std::string, op_time> totals_;
};

}  // namespace courier::cli
