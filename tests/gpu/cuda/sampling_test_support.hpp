#pragma once
// What the sampler's tests share: a batch's launch with every list it carries uploaded, a batch
// sampled through a device's `sample` (the sim device's, the reference; the CUDA device's, which
// uploads the lists itself), and the CUDA device's samples checked against the sim's.
#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/cuda/cuda_device.hpp"
#include "gpu/cuda/kernels/sampling.hpp"
#include "gpu/device.hpp"
#include "tests/gpu/cuda/kernel_test_support.hpp"

namespace courier::test::kernels {

// `batch` sampled by launch_sampling over `logits` ([rows, vocab]) as `plan` says, each of its
// lists uploaded (penalties, bias, masks, end tokens); each row's token alone in `fed` when
// asked for. Needs a device.
inline std::vector<gpu::cuda::sampled_row_dev> run_sampling_kernel(
    const std::vector<float>& logits, const gpu::sampling_batch& batch,
    const gpu::cuda::sampling_plan& plan, std::vector<std::int32_t>* fed = nullptr) {
  cuda_buffer l = cuda_put(logits);
  cuda_buffer rows = cuda_put(batch.rows);
  cuda_buffer penalties = cuda_put(batch.penalty_tokens);
  cuda_buffer bias = cuda_put(batch.bias_tokens);
  cuda_buffer masks = cuda_put(batch.mask_words);
  cuda_buffer ends = cuda_put(batch.end_tokens);
  cuda_buffer workspace = cuda_put(std::vector<char>(plan.workspace_bytes));
  cuda_buffer out = cuda_put(std::vector<char>(plan.output_bytes));
  cuda_buffer tokens = cuda_put(std::vector<std::int32_t>(batch.rows.size(), -7));
  CUDA_CHECK(gpu::cuda::launch_sampling(
      plan, static_cast<const float*>(l.get()), static_cast<const gpu::sampling_row*>(rows.get()),
      static_cast<const gpu::penalty_token*>(penalties.get()),
      static_cast<const gpu::bias_token*>(bias.get()), workspace.get(),
      static_cast<gpu::cuda::sampled_row_dev*>(out.get()), static_cast<std::int32_t*>(tokens.get()),
      nullptr, static_cast<const std::uint32_t*>(masks.get()),
      static_cast<const std::uint32_t*>(ends.get())));
  if (fed) *fed = cuda_get<std::int32_t>(tokens, batch.rows.size());
  return cuda_get<gpu::cuda::sampled_row_dev>(out, static_cast<std::size_t>(plan.num_rows));
}

// `batch` sampled by `dev.sample` over `logits` ([rows, vocab]) uploaded to it.
inline std::vector<gpu::sample_result> sample_on(gpu::device& dev, const std::vector<float>& logits,
                                                 std::int64_t vocab,
                                                 const gpu::sampling_batch& batch) {
  gpu::device_buffer buf = dev.allocate(logits.size() * sizeof(float));
  dev.upload(buf.data(), logits.data(), logits.size() * sizeof(float));
  const auto rows = static_cast<std::int64_t>(logits.size()) / vocab;
  return dev.sample(buf.view(gpu::dtype::f32, rows, vocab), batch);
}

// The CUDA device 0's `sample` of `batch` equals `want` (the sim device's) token for token and
// in its top ids, twice: the second round reuses the buffers the first uploaded the lists into.
// Needs a device.
inline void check_cuda_device_samples(const std::vector<float>& logits, std::int64_t vocab,
                                      const gpu::sampling_batch& batch,
                                      const std::vector<gpu::sample_result>& want) {
  const std::unique_ptr<gpu::device> dev = gpu::cuda::make_cuda_device(0);
  for (int round = 0; round < 2; ++round) {
    const std::vector<gpu::sample_result> got = sample_on(*dev, logits, vocab, batch);
    REQUIRE(got.size() == want.size());
    for (std::size_t r = 0; r < want.size(); ++r) {
      INFO("round " << round << " row " << r);
      CHECK(got[r].token == want[r].token);
      CHECK(got[r].top_ids == want[r].top_ids);
    }
  }
}

}  // namespace courier::test::kernels
