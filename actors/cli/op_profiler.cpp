#include "actors/cli/op_profiler.hpp"

#include <algorithm>

namespace courier::cli {

void op_profiler::stop() {
  on_ = false;
  for (const mark& m : marks_) {
    op_time& t = totals_[m.op];
    ++t.calls;
    t.seconds += inner().elapsed_ms(*m.begin, *m.end) * 1e-3;
    if (m.work) t.work = t.work.value_or(gpu::work_counts::tally{}) + *m.work;
  }
  if (!marks_.empty()) {
    span_seconds_ = inner().elapsed_ms(*marks_.front().begin, *marks_.back().end) * 1e-3;
  }
  marks_.clear();
}

std::vector<op_profiler::op_time> op_profiler::results() const {
  std::vector<op_time> out;
  for (const auto& [op, t] : totals_) {
    out.push_back(t);
    out.back().op = op;
  }
  std::sort(out.begin(), out.end(),
            [](const op_time& a, const op_time& b) { return a.seconds > b.seconds; });
  return out;
}

void op_profiler::upload(void* dst, const void* src, std::size_t n) {
  timed("upload", [&] { forwarding_device::upload(dst, src, n); });
}
void op_profiler::download(void* dst, const void* src, std::size_t n) {
  timed("download", [&] { forwarding_device::download(dst, src, n); });
}
std::vector<gpu::sample_result> op_profiler::sample(gpu::tensor_view logits,
                                                    const gpu::sampling_batch& batch) {
  std::vector<gpu::sample_result> r;
  timed("sample", [&] { r = forwarding_device::sample(logits, batch); });
  return r;
}

std::shared_ptr<gpu::pending_samples> op_profiler::sample_async(gpu::tensor_view logits,
                                                                const gpu::sampling_batch& batch,
                                                                std::int32_t* tokens_out) {
  std::shared_ptr<gpu::pending_samples> p;
  timed("sample", [&] { p = forwarding_device::sample_async(logits, batch, tokens_out); });
  return p;
}

}  // namespace courier::cli
