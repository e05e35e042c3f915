// The logit bias on the CUDA sampler against the sim backend: forced and banned tokens, a bias
// with penalties and filters, slices shared by rows, a bad slice, and the device op that uploads
// the bias. The random combinations are in sampling_test.cpp. The sim side and the expected
// tokens are checked on every machine; the kernel only where a GPU is present.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "gpu/cuda/cuda_check.hpp"
#include "gpu/cuda/cuda_device.hpp"
#include "gpu/cuda/kernels/sampling.hpp"
#include "gpu/device.hpp"
#include "gpu/sim/sim_sampling.hpp"
#include "tests/gpu/cuda/sampling_test_support.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_cuda_sampling_bias {

namespace {

namespace gpu = courier::gpu;
namespace cuda = courier::gpu::cuda;
namespace sim = courier::gpu::sim;
using courier::test::kernels::check_cuda_device_samples;
using courier::test::kernels::run_sampling_kernel;
using courier::test::kernels::sample_on;

constexpr std::int64_t vocab = 32000;

// Rows over one random row of logits each; `forced` is biased +100 in the rows that force it.
struct bias_case {
  std::vector<float> logits;  // [rows, vocab]
  gpu::sampling_batch batch;
  std::vector<std::uint32_t> want;  // the token each row must give
};

bias_case make_bias_case() {
  std::mt19937 rng(77);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  bias_case c;
  const std::uint32_t forced = 31999;
  // Slice 0 forces `forced` (+ moderate entries); slice 1 bans each row's argmax (set below).
  c.batch.bias_tokens = {{forced, 100.0f}, {5, 3.0f}, {6, -3.0f}};
  for (int r = 0; r < 12; ++r) {
    std::vector<float> row_logits(static_cast<std::size_t>(vocab));
    for (float& x : row_logits) x = normal(rng);
    gpu::sampling_row row;
    row.temperature = r % 3 == 0 ? 0.0f : (r % 3 == 1 ? 0.8f : 1.5f);
    row.seed = rng();
    row.draw_index = static_cast<std::uint64_t>(r);
    row.num_logprobs = 3;
    if (r % 4 == 1) row.top_k = 40;
    if (r % 4 == 2) row.top_p = 0.9f;
    if (r % 4 == 3) {
      row.repetition_penalty = 1.3f;
      row.presence_penalty = 0.5f;
      row.penalty_begin = static_cast<std::int32_t>(c.batch.penalty_tokens.size());
      row.penalty_count = 1;
      c.batch.penalty_tokens.push_back({forced, 2, true});  // penalised after the bias
    }
    if (r < 6) {  // rows 0..5 share slice 0, as a row's draft positions do
      row.bias_begin = 0;
      row.bias_count = 3;
      c.want.push_back(forced);
    } else {  // greedy rows that ban their argmax and the runner-up
      row.temperature = 0.0f;
      std::vector<std::uint32_t> order(row_logits.size());
      for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
      std::partial_sort(order.begin(), order.begin() + 3, order.end(),
                        [&](std::uint32_t a, std::uint32_t b) {
                          return row_logits[a] > row_logits[b] ||
                                 (row_logits[a] == row_logits[b] && a < b);
                        });
      row.bias_begin = static_cast<std::int32_t>(c.batch.bias_tokens.size());
      row.bias_count = 2;
      c.batch.bias_tokens.push_back({order[0], -100.0f});
      c.batch.bias_tokens.push_back({order[1], -100.0f});
      c.want.push_back(order[2]);
    }
    c.batch.rows.push_back(row);
    c.logits.insert(c.logits.end(), row_logits.begin(), row_logits.end());
  }
  return c;
}

}  // namespace

TEST_CASE("cuda sampling: a +100 bias forces and -100 bans a token, with the sim's logprobs",
          "[gpu]") {
  const bias_case c = make_bias_case();
  const auto num_rows = static_cast<std::int64_t>(c.batch.rows.size());
  const std::vector<gpu::sample_result> want =
      sim::sample_rows(c.logits.data(), num_rows, vocab, c.batch);
  for (std::size_t r = 0; r < want.size(); ++r) {
    INFO("row " << r);
    REQUIRE(want[r].token == c.want[r]);
  }
  const std::optional<cuda::sampling_plan> plan = cuda::plan_sampling(num_rows, vocab, c.batch);
  REQUIRE(plan);
  CHECK(plan->num_work_rows == num_rows);
  CHECK(plan->num_bias_tokens == static_cast<std::int64_t>(c.batch.bias_tokens.size()));
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  const std::vector<cuda::sampled_row_dev> dev = run_sampling_kernel(c.logits, c.batch, *plan);
  const auto got = cuda::to_sample_results(dev.data(), dev.size());
  REQUIRE(got);
  for (std::size_t r = 0; r < want.size(); ++r) {
    INFO("row " << r);
    CHECK((*got)[r].token == c.want[r]);
    CHECK((*got)[r].logprob == Approx(want[r].logprob).margin(1e-4));
    CHECK((*got)[r].top_ids == want[r].top_ids);  // raw: the banned argmax still first
  }
}

TEST_CASE("cuda sampling: a row whose bias slice lies outside the batch reports bad_bias",
          "[gpu]") {
  gpu::sampling_batch batch;
  batch.rows.resize(2);
  batch.rows[1].bias_begin = 1;
  batch.rows[1].bias_count = 2;  // entries 1 and 2 of a list of 2
  batch.bias_tokens = {{3, 1.0f}, {4, 1.0f}};
  const std::optional<cuda::sampling_plan> plan = cuda::plan_sampling(2, 64, batch);
  REQUIRE(plan);
  REQUIRE(plan->num_work_rows == 1);
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  bias_case c;
  c.logits.assign(2 * 64, 0.5f);
  c.batch = batch;
  const std::vector<cuda::sampled_row_dev> got = run_sampling_kernel(c.logits, c.batch, *plan);
  CHECK(got[0].status == cuda::sampled_row_status::ok);
  CHECK(got[1].status == cuda::sampled_row_status::bad_bias);
  CHECK_FALSE(cuda::to_sample_results(got.data(), got.size()));
}

TEST_CASE("cuda device: sample uploads the logit bias and matches the sim device", "[gpu]") {
  const bias_case c = make_bias_case();
  const std::unique_ptr<gpu::device> sim_device = gpu::make_sim_device(1, 512);
  const std::vector<gpu::sample_result> want = sample_on(*sim_device, c.logits, vocab, c.batch);
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  check_cuda_device_samples(c.logits, vocab, c.batch, want);
}

}  // namespace courier_test_gpu_cuda_sampling_bias
