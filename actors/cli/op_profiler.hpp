#pragma once
// bench-forward's per-op profile of a step: a device decorator that, while on, puts a device
// timestamp (a timing CUDA event on a GPU) before and after each op, without waiting, and at
// stop() adds each op's device time to its total. So the ops run back to back as in a real step,
// each op's time is the GPU's for its kernels, and the span from the first timestamp to the last
// less the ops' sum is the time the GPU waited for the host between them (kernel launches, the
// host's own work). On the sim, whose ops run as they are called, timestamps are host clocks.
// Where the device's runtime counts the work queued (device::counted_work: the CUDA emulator),
// each op also gets the kernels, library calls and copies it queued.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu/forwarding_device.hpp"
#include "gpu/stream_ops.hpp"

namespace courier::cli {

class op_profiler final : public gpu::forwarding_device {
 public:
  using forwarding_device::forwarding_device;

  struct op_time {
    std::string op;
    std::int64_t calls = 0;
    double seconds = 0;
    std::optional<gpu::work_counts::tally> work;  // what its calls queued, where counted
  };

  void start() {  // clears the totals and turns timing on
    totals_.clear();
    marks_.clear();
    span_seconds_ = 0;
    on_ = true;
  }
  void stop();  // waits for the device and adds up the times
  // The ops timed between start() and stop(), the slowest first.
  std::vector<op_time> results() const;
  // From the first op's start to the last op's end, on the device.
  double span_seconds() const { return span_seconds_; }

  void upload(void* dst, const void* src, std::size_t n) override;
  void download(void* dst, const void* src, std::size_t n) override;
  // Every stream op (gpu/stream_ops.hpp), timed under its own name.
#define COURIER_TIME_STREAM_OP(name, params, args)       \
  void name params override {                            \
    timed(#name, [&] { forwarding_device::name args; }); \
  }
  COURIER_STREAM_OPS(COURIER_TIME_STREAM_OP)
#undef COURIER_TIME_STREAM_OP
  std::vector<gpu::sample_result> sample(gpu::tensor_view logits,
                                         const gpu::sampling_batch& batch) override;
  // Timed on the device up to the samples' copy to the host.
  std::shared_ptr<gpu::pending_samples> sample_async(gpu::tensor_view logits,
                                                     const gpu::sampling_batch& batch,
                                                     std::int32_t* tokens_out) override;

 private:
  template <typename F>
  void timed(const char* op, F&& f) {
    if (!on_) return f();
    const std::optional<gpu::work_counts> before = inner().counted_work();
    std::unique_ptr<gpu::device_timestamp> begin = inner().timestamp();
    f();
    marks_.push_back({op, std::move(begin), inner().timestamp(), std::nullopt});
    if (before) marks_.back().work = (*inner().counted_work() - *before).eager;
  }

  struct mark {
    const char* op;
    std::unique_ptr<gpu::device_timestamp> begin, end;
    std::optional<gpu::work_counts::tally> work;
  };
  bool on_ = false;
  std::vector<mark> marks_;  // since start(), in order
  std::map<std::string, op_time> totals_;
  double span_seconds_ = 0;
};

}  // namespace courier::cli
