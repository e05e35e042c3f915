// The allowed-token mask (a grammar's) on the CUDA sampler against the sim backend: masks of
// every density with greedy and seeded draws, a mask with a +100 bias on a disallowed token,
// rows with nothing to draw (no_allowed_token, fed as 0), a bad slice, and the device op that
// uploads the masks. The sim side is checked on every machine; the kernel where a GPU is.
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
namespace courier_test_gpu_cuda_sampling_mask {

namespace {

namespace gpu = courier::gpu;
namespace cuda = courier::gpu::cuda;
namespace sim = courier::gpu::sim;
using courier::test::kernels::check_cuda_device_samples;
using courier::test::kernels::run_sampling_kernel;
using courier::test::kernels::sample_on;

constexpr std::int64_t vocab = 30011;  // not a multiple of 32
constexpr std::int64_t words = gpu::mask_words_per_row(vocab);

struct mask_case {
  std::vector<float> logits;
  gpu::sampling_batch batch;
  std::vector<std::vector<bool>> allowed;  // per row; empty: unmasked
};

mask_case make_mask_case() {
  std::mt19937 rng(31);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  mask_case c;
  const int num_rows = 24;
  c.logits.resize(static_cast<std::size_t>(num_rows * vocab));
  for (float& x : c.logits) x = normal(rng);
  c.batch.bias_tokens = {{7, 100.0f}};
  for (int r = 0; r < num_rows; ++r) {
    gpu::sampling_row row;
    row.temperature = r % 3 == 0 ? 0.0f : 0.8f;
    row.top_p = r % 4 == 1 ? 0.9f : 1.0f;
    row.top_k = r % 5 == 2 ? 40 : 0;
    row.seed = 100 + static_cast<std::uint64_t>(r);
    row.num_logprobs = 4;
    std::vector<bool> allowed;
    if (r % 6 != 5) {  // masked: densities from one token in 1000 to half
      const std::uint32_t one_in = r % 4 == 0 ? 1000 : r % 4 == 1 ? 37 : r % 4 == 2 ? 2 : 5;
      allowed.assign(static_cast<std::size_t>(vocab), false);
      for (std::int64_t t = 0; t < vocab; ++t) allowed[t] = rng() % one_in == 0;
      allowed[static_cast<std::size_t>(vocab - 1)] = r % 2 == 0;  // the partial last word
      if (r == 4) allowed.assign(static_cast<std::size_t>(vocab), false);  // nothing at all
      if (r == 8) row.bias_count = 1;  // +100 on token 7, which stays out
      if (r == 8) allowed[7] = false;
      row.mask_begin = static_cast<std::int64_t>(c.batch.mask_words.size());
      c.batch.mask_words.resize(c.batch.mask_words.size() + static_cast<std::size_t>(words), 0);
      for (std::int64_t t = 0; t < vocab; ++t) {
        if (allowed[t]) c.batch.mask_words[row.mask_begin + t / 32] |= 1u << (t % 32);
      }
    }
    c.batch.rows.push_back(row);
    c.allowed.push_back(std::move(allowed));
  }
  return c;
}

}  // namespace

TEST_CASE("cuda sampling: masked rows draw the sim's allowed tokens, or no_allowed_token",
          "[gpu]") {
  const mask_case c = make_mask_case();
  const auto num_rows = static_cast<std::int64_t>(c.batch.rows.size());
  const std::vector<gpu::sample_result> want =
      sim::sample_rows(c.logits.data(), num_rows, vocab, c.batch);
  for (std::size_t r = 0; r < want.size(); ++r) {
    INFO("row " << r);
    if (r == 4) {
      REQUIRE(want[r].token == gpu::no_allowed_token);
    } else if (!c.allowed[r].empty()) {
      REQUIRE(want[r].token < vocab);
      REQUIRE(c.allowed[r][want[r].token]);
    }
  }
  const std::optional<cuda::sampling_plan> plan = cuda::plan_sampling(num_rows, vocab, c.batch);
  REQUIRE(plan);
  CHECK(plan->num_mask_words == static_cast<std::int64_t>(c.batch.mask_words.size()));
  CHECK(plan->num_work_rows == 20);  // the masked rows
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  std::vector<std::int32_t> fed;
  const std::vector<cuda::sampled_row_dev> dev = run_sampling_kernel(c.logits, c.batch, *plan, &fed);
  const auto got = cuda::to_sample_results(dev.data(), dev.size());
  REQUIRE(got);
  for (std::size_t r = 0; r < want.size(); ++r) {
    INFO("row " << r);
    CHECK((*got)[r].token == want[r].token);
    CHECK((*got)[r].top_ids == want[r].top_ids);  // raw, unmasked
    CHECK(fed[r] == (want[r].token == gpu::no_allowed_token ? 0
                                                            : static_cast<std::int32_t>(want[r].token)));
  }
}

TEST_CASE("cuda sampling: a row whose mask lies outside the batch reports bad_mask", "[gpu]") {
  mask_case c;
  c.logits.assign(static_cast<std::size_t>(2 * vocab), 0.5f);
  c.batch.rows.resize(2);
  c.batch.rows[1].mask_begin = 1;  // needs words 1..words, the batch has `words`
  c.batch.mask_words.assign(static_cast<std::size_t>(words), ~0u);
  const std::optional<cuda::sampling_plan> plan = cuda::plan_sampling(2, vocab, c.batch);
  REQUIRE(plan);
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  const std::vector<cuda::sampled_row_dev> got = run_sampling_kernel(c.logits, c.batch, *plan);
  CHECK(got[0].status == cuda::sampled_row_status::ok);
  CHECK(got[1].status == cuda::sampled_row_status::bad_mask);
  CHECK_FALSE(cuda::to_sample_results(got.data(), got.size()));
}

TEST_CASE("cuda device: sample uploads the masks and matches the sim device", "[gpu]") {
  const mask_case c = make_mask_case();
  const std::unique_ptr<gpu::device> sim_device = gpu::make_sim_device(1, 512);
  const std::vector<gpu::sample_result> want = sample_on(*sim_device, c.logits, vocab, c.batch);
  CHECK(want[4].token == gpu::no_allowed_token);
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  check_cuda_device_samples(c.logits, vocab, c.batch, want);
}

}  // namespace courier_test_gpu_cuda_sampling_mask
