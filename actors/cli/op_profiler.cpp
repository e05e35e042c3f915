#include "actors/cli/op_profiler.hpp"

#include <algorithm>

namespace courier::cli {

void op_profiler::stop() {
  on_ = false;
  for (const mark& m : marks_) {
    op_time& t = totals_[m.op];
    ++t.calls;
    t.seconds += inner().elapsed_ms(*m.begin, *m.end) * 1e-3;
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
void op_profiler::embedding(const std::int32_t* ids, gpu::tensor_view table,
                            gpu::tensor_view out) {
  timed("embedding", [&] { forwarding_device::embedding(ids, table, out); });
}
void op_profiler::rms_norm(gpu::tensor_view x, gpu::tensor_view w, float eps,
                           gpu::tensor_view out) {
  timed("rms_norm", [&] { forwarding_device::rms_norm(x, w, eps, out); });
}
void op_profiler::add_rms_norm(gpu::tensor_view residual, gpu::tensor_view x, gpu::tensor_view w,
                               float eps, gpu::tensor_view out) {
  timed("add_rms_norm", [&] { forwarding_device::add_rms_norm(residual, x, w, eps, out); });
}
void op_profiler::linear(gpu::tensor_view x, gpu::tensor_view w, gpu::tensor_view bias,
                         gpu::tensor_view out) {
  timed("linear", [&] { forwarding_device::linear(x, w, bias, out); });
}
void op_profiler::qkv_rope_kv_write(gpu::tensor_view qkv, std::int32_t num_q_heads,
                                    std::int32_t num_kv_heads, std::int32_t head_dim,
                                    gpu::tensor_view q_norm, gpu::tensor_view k_norm, float eps,
                                    const std::int32_t* positions, const float* inv_freq,
                                    const std::int32_t* slot_mapping, gpu::kv_cache_view cache,
                                    gpu::tensor_view q_out) {
  timed("qkv_rope_kv_write", [&] {
    forwarding_device::qkv_rope_kv_write(qkv, num_q_heads, num_kv_heads, head_dim, q_norm, k_norm,
                                         eps, positions, inv_freq, slot_mapping, cache, q_out);
  });
}
void op_profiler::attention(gpu::tensor_view q, gpu::kv_cache_view cache,
                            const gpu::attention_batch& batch, float scale, gpu::tensor_view out) {
  timed("attention", [&] { forwarding_device::attention(q, cache, batch, scale, out); });
}
void op_profiler::silu_mul(gpu::tensor_view gate_up, gpu::tensor_view out) {
  timed("silu_mul", [&] { forwarding_device::silu_mul(gate_up, out); });
}
void op_profiler::gather_rows(gpu::tensor_view x, const std::int32_t* rows,
                              gpu::tensor_view out) {
  timed("gather_rows", [&] { forwarding_device::gather_rows(x, rows, out); });
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

void op_profiler::copy_tokens(const std::int32_t* src, const std::int32_t* src_index,
                              std::int32_t* dst, const std::int32_t* dst_index, std::int32_t n) {
  timed("copy_tokens", [&] { forwarding_device::copy_tokens(src, src_index, dst, dst_index, n); });
}

}  // namespace courier::cli
