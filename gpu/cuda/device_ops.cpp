#include "gpu/cuda/device_ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "gpu/cuda/cuda_check.hpp"
#include "gpu/cuda/kernels/attention.hpp"
#include "gpu/cuda/kernels/sampling.hpp"

namespace courier::gpu::cuda {

void* device_ops::scratch::at_least(std::size_t n) {
  if (n <= bytes) return data;
  if (data) CUDA_CHECK(cudaFree(data));
  data = nullptr;
  bytes = 0;
  CUDA_CHECK(cudaMalloc(&data, n));
  bytes = n;
  return data;
}

device_ops::scratch::~scratch() {
  if (data) cudaFree(data);
}

device_ops::~device_ops() = default;

std::size_t device_ops::reserve(const workspace_limits& l) {
  attention_sizes max;
  max.num_tokens = static_cast<std::int32_t>(l.max_tokens);
  max.num_seqs = static_cast<std::int32_t>(l.max_seqs);
  max.max_kv_len = static_cast<std::int32_t>(l.max_kv_len);
  max.num_q_heads = l.num_q_heads;
  max.num_kv_heads = l.num_kv_heads;
  max.head_dim = l.head_dim;
  max.num_sms = num_sms_;
  attention_ws_.at_least(attention_workspace_bound(max));
  // Each sequence has at most one penalty slice (its row samples one position) and one bias
  // slice (shared by its positions); any sampled position may need a working copy.
  const sampling_bound sb = sampling_workspace_bound(
      l.max_sample_rows, std::min(l.max_seqs, l.max_sample_rows), l.max_kv_len, l.vocab);
  sampling_rows_.at_least(sb.rows_bytes);
  // Penalty tokens uploaded with a batch: one sequence's. The engine's rows take theirs from the
  // lists the model keeps on the device; uploaded ones serve generate_one and the tests.
  sampling_penalties_.at_least(
      sampling_workspace_bound(1, 1, l.max_kv_len, l.vocab).penalties_bytes);
  sampling_bias_.at_least(sb.bias_bytes);
  sampling_mask_.at_least(sb.mask_bytes);
  sampling_ends_.at_least(sb.end_bytes);
  sampling_ws_.at_least(sb.workspace_bytes);
  sampling_out_.at_least(sb.output_bytes);
  results_->reserve(sb.output_bytes, 3);  // a step running, one queued, one being read
  return attention_ws_.bytes + sampling_rows_.bytes + sampling_penalties_.bytes +
         sampling_bias_.bytes + sampling_mask_.bytes + sampling_ends_.bytes + sampling_ws_.bytes +
         sampling_out_.bytes;
}

void device_ops::plan_attention(const attention_batch& batch, std::int32_t num_q_heads,
                                std::int32_t num_kv_heads, std::int32_t head_dim,
                                cudaStream_t stream) {
  attention_sizes sz;
  sz.num_tokens = batch.num_tokens;
  sz.num_seqs = batch.num_seqs;
  sz.max_kv_len = batch.max_kv_len;
  sz.num_q_heads = num_q_heads;
  sz.num_kv_heads = num_kv_heads;
  sz.head_dim = head_dim;
  sz.num_sms = num_sms_;
  const attention_plan plan = cuda::plan_attention(sz);  // the free function, not this one
  if (!plan.supported) {
    throw std::invalid_argument(
        fmt::format("cuda attention: head_dim {} with {} query and {} kv heads is not supported "
                    "(head_dim 32, 64, "
                    "96 or 128, at most 64 query heads per kv head)",
                    sz.head_dim, sz.num_q_heads, sz.num_kv_heads));
  }
  planned_ = {};  // a failure below leaves nothing planned
  void* ws = attention_ws_.at_least(attention_workspace_bytes(plan));
  CUDA_CHECK(launch_attention_plan(plan, batch, ws, stream));
  plan_ = plan;
  planned_ = planned_attention::of(batch, num_q_heads, num_kv_heads, head_dim);
}

void device_ops::attention(tensor_view q, kv_cache_view cache, const attention_batch& batch,
                           float scale, tensor_view out, cudaStream_t stream) {
  if (const char* why = planned_.mismatch(batch, q.cols, cache)) {
    throw std::logic_error(fmt::format("cuda attention: {}", why));
  }
  // plan_attention sized the workspace for this plan; it is not grown (the tile list is in it).
  CUDA_CHECK(launch_attention(plan_, q.data, cache, batch, scale, out.data, attention_ws_.data,
                              stream));
}

namespace {

// Samples whose results are copied to a pinned block, complete when `done` is.
class cuda_pending_samples final : public pending_samples {
 public:
  cuda_pending_samples(int ordinal, std::shared_ptr<void> block, std::size_t rows)
      : ordinal_(ordinal), block_(std::move(block)), rows_(rows) {}
  event& done() { return done_; }
  void* block() const { return block_.get(); }

  bool ready() override { return done_.done(); }  // errors: take()'s
  void wait() override {
    const device_scope on(ordinal_);  // the waiter's thread may not have the device current
    (void)cudaEventSynchronize(done_.get());  // an error is take()'s to report
  }
  std::vector<sample_result> take() override {
    done_.synchronize();
    auto results = to_sample_results(static_cast<const sampled_row_dev*>(block_.get()), rows_);
    if (!results) throw std::runtime_error("cuda sample: a row's sampling failed on the device");
    return std::move(*results);
  }

 private:
  int ordinal_;
  event done_;
  std::shared_ptr<void> block_;  // pinned, from the pool
  std::size_t rows_;
};

}  // namespace

std::shared_ptr<pending_samples> device_ops::sample_async(tensor_view logits,
                                                          const sampling_batch& batch,
                                                          std::int32_t* tokens_out,
                                                          cudaStream_t stream) {
  const auto plan = plan_sampling(logits.rows, logits.cols, batch);
  if (!plan) throw std::invalid_argument("cuda sample: the batch does not match the logits");
  const std::size_t rows_bytes = batch.rows.size() * sizeof(sampling_row);
  auto* rows_dev = static_cast<sampling_row*>(sampling_rows_.at_least(rows_bytes));
  uploads_.upload(rows_dev, batch.rows.data(), rows_bytes, stream);
  penalty_token* pen_dev = nullptr;
  if (!batch.penalty_tokens.empty()) {
    const std::size_t pen_bytes = batch.penalty_tokens.size() * sizeof(penalty_token);
    pen_dev = static_cast<penalty_token*>(sampling_penalties_.at_least(pen_bytes));
    uploads_.upload(pen_dev, batch.penalty_tokens.data(), pen_bytes, stream);
  }
  bias_token* bias_dev = nullptr;
  if (!batch.bias_tokens.empty()) {
    const std::size_t bias_bytes = batch.bias_tokens.size() * sizeof(bias_token);
    bias_dev = static_cast<bias_token*>(sampling_bias_.at_least(bias_bytes));
    uploads_.upload(bias_dev, batch.bias_tokens.data(), bias_bytes, stream);
  }
  std::uint32_t* mask_dev = nullptr;
  if (!batch.mask_words.empty()) {
    const std::size_t mask_bytes = batch.mask_words.size() * sizeof(std::uint32_t);
    mask_dev = static_cast<std::uint32_t*>(sampling_mask_.at_least(mask_bytes));
    uploads_.upload(mask_dev, batch.mask_words.data(), mask_bytes, stream);
  }
  std::uint32_t* ends_dev = nullptr;
  if (!batch.end_tokens.empty()) {
    const std::size_t end_bytes = batch.end_tokens.size() * sizeof(std::uint32_t);
    ends_dev = static_cast<std::uint32_t*>(sampling_ends_.at_least(end_bytes));
    uploads_.upload(ends_dev, batch.end_tokens.data(), end_bytes, stream);
  }
  void* ws = plan->workspace_bytes ? sampling_ws_.at_least(plan->workspace_bytes) : nullptr;
  auto* out_dev = static_cast<sampled_row_dev*>(sampling_out_.at_least(plan->output_bytes));
  CUDA_CHECK(launch_sampling(*plan, static_cast<const float*>(logits.data), rows_dev, pen_dev,
                             bias_dev, ws, out_dev, tokens_out, stream, mask_dev, ends_dev));
  auto pending = std::make_shared<cuda_pending_samples>(
      ordinal_, results_->acquire(plan->output_bytes), static_cast<std::size_t>(plan->num_rows));
  CUDA_CHECK(cudaMemcpyAsync(pending->block(), out_dev, plan->output_bytes,
                             cudaMemcpyDeviceToHost, stream));
  pending->done().record(stream);
  return pending;
}

}  // namespace courier::gpu::cuda
