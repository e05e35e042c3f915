// min_tokens on the CUDA sampler against the sim backend: a row's end tokens (EOS, stop ids)
// get -inf while its draw_index is below end_until, after the bias (a +100 on an end token does
// not bring it back) and before penalties; from end_until on they are drawn as any token. Slices
// shared by a row's positions, a bad slice, and the device op that uploads the end tokens. The
// expected tokens are worked out here from the logits (the argmax of what is not banned); the
// sim is checked against them on every machine, the kernel where a GPU (or the emulator) is.
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
namespace courier_test_gpu_cuda_sampling_ends {

namespace {

namespace gpu = courier::gpu;
namespace cuda = courier::gpu::cuda;
namespace sim = courier::gpu::sim;
using courier::test::kernels::check_cuda_device_samples;
using courier::test::kernels::run_sampling_kernel;
using courier::test::kernels::sample_on;

constexpr std::int64_t vocab = 32000;

struct ends_case {
  std::vector<float> logits;  // [rows, vocab]
  gpu::sampling_batch batch;
  std::vector<std::uint32_t> want;                 // the token each greedy row must give
  std::vector<std::vector<std::uint32_t>> banned;  // what each row may not give
};

// The ids of a row's logits, best first (ties to the lower id), the first n of them.
std::vector<std::uint32_t> best(const std::vector<float>& x, std::size_t n) {
  std::vector<std::uint32_t> order(x.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::partial_sort(
      order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
      [&](std::uint32_t a, std::uint32_t b) { return x[a] > x[b] || (x[a] == x[b] && a < b); });
  order.resize(n);
  return order;
}

// 14 rows. Each row's end tokens are its two best tokens, made far more likely than the rest
// (+12), so a row that draws while they are banned shows the ban at once.
ends_case make_ends_case() {
  std::mt19937 rng(2026);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  ends_case c;
  for (int r = 0; r < 14; ++r) {
    std::vector<float> x(static_cast<std::size_t>(vocab));
    for (float& v : x) v = normal(rng);
    if (r == 8) {  // the second position (a draft) of the row before: its logits, its slice
      x.assign(c.logits.end() - vocab, c.logits.end());
    }
    const std::vector<std::uint32_t> top = best(x, 3);
    if (r != 8) {
      x[top[0]] += 12.0f;
      x[top[1]] += 12.0f;
    }
    gpu::sampling_row row;
    row.seed = rng();
    row.num_logprobs = 2;
    row.end_until = 5;
    row.draw_index = static_cast<std::uint64_t>(r % 7);  // 0..4 banned, 5 and 6 not
    const bool banned = row.draw_index < row.end_until;
    if (r % 2 == 1) {
      row.temperature = 1.0f;
    }
    if (r == 3) {  // a +100 bias on an end token: the ban still wins
      row.bias_begin = static_cast<std::int32_t>(c.batch.bias_tokens.size());
      row.bias_count = 1;
      c.batch.bias_tokens.push_back({top[0], 100.0f});
    }
    if (r == 4) {  // penalties after the ban leave it banned
      row.repetition_penalty = 1.5f;
      row.frequency_penalty = 0.5f;
      row.penalty_begin = static_cast<std::int32_t>(c.batch.penalty_tokens.size());
      row.penalty_count = 2;
      c.batch.penalty_tokens.push_back({top[0], 1, 0});
      c.batch.penalty_tokens.push_back({top[2], 1, 1});
    }
    if (r == 8) {
      row.end_begin = c.batch.rows.back().end_begin;
      row.end_count = 2;
    } else {
      row.end_begin = static_cast<std::int32_t>(c.batch.end_tokens.size());
      row.end_count = 2;
      c.batch.end_tokens.push_back(top[0]);
      c.batch.end_tokens.push_back(top[1]);
    }
    c.banned.push_back(banned ? std::vector<std::uint32_t>{top[0], top[1]}
                              : std::vector<std::uint32_t>{});
    std::uint32_t greedy = banned ? top[2] : top[0];
    if (r == 4 && banned) {  // top[2] penalised: 1.5x lower, 0.5 less
      const float t2 = x[top[2]];
      const float p = (t2 > 0 ? t2 / 1.5f : t2 * 1.5f) - 0.5f;
      std::vector<float> y = x;
      y[top[0]] = y[top[1]] = -1e30f;
      y[top[2]] = p;
      greedy = best(y, 1)[0];
    }
    c.want.push_back(greedy);
    c.batch.rows.push_back(row);
    c.logits.insert(c.logits.end(), x.begin(), x.end());
  }
  return c;
}

void check_row(const ends_case& c, std::size_t r, std::uint32_t token) {
  INFO("row " << r);
  const gpu::sampling_row& row = c.batch.rows[r];
  for (const std::uint32_t t : c.banned[r]) CHECK(token != t);
  if (row.temperature <= 0.0f) CHECK(token == c.want[r]);
}

}  // namespace

TEST_CASE("sampling: below min_tokens a row's end tokens are never drawn, from it on they are",
          "[gpu]") {
  const ends_case c = make_ends_case();
  const auto num_rows = static_cast<std::int64_t>(c.batch.rows.size());
  const std::vector<gpu::sample_result> want =
      sim::sample_rows(c.logits.data(), num_rows, vocab, c.batch);
  std::size_t drew_end = 0;  // rows past min_tokens that drew an end token (they are +12)
  for (std::size_t r = 0; r < want.size(); ++r) {
    check_row(c, r, want[r].token);
    drew_end += c.banned[r].empty() && c.batch.rows[r].temperature > 0.0f;
  }
  CHECK(drew_end > 0);
  const std::optional<cuda::sampling_plan> plan = cuda::plan_sampling(num_rows, vocab, c.batch);
  REQUIRE(plan);
  // Rows banning their ends get a working copy; those past min_tokens only for bias/penalties.
  std::int32_t copies = 0;
  for (std::size_t r = 0; r < c.batch.rows.size(); ++r) {
    const gpu::sampling_row& row = c.batch.rows[r];
    copies += !c.banned[r].empty() || row.bias_count > 0 || row.penalty_count > 0;
  }
  CHECK(plan->num_work_rows == copies);
  CHECK(plan->num_end_tokens == static_cast<std::int64_t>(c.batch.end_tokens.size()));
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  const std::vector<cuda::sampled_row_dev> dev = run_sampling_kernel(c.logits, c.batch, *plan);
  const auto got = cuda::to_sample_results(dev.data(), dev.size());
  REQUIRE(got);
  for (std::size_t r = 0; r < want.size(); ++r) {
    INFO("row " << r);
    check_row(c, r, (*got)[r].token);
    CHECK((*got)[r].token == want[r].token);
    CHECK((*got)[r].logprob == Approx(want[r].logprob).margin(1e-4));
    CHECK((*got)[r].top_ids == want[r].top_ids);  // raw: the banned tokens still first
  }
}

TEST_CASE("cuda sampling: a row whose end-token slice lies outside the batch reports bad_ends",
          "[gpu]") {
  gpu::sampling_batch batch;
  batch.rows.resize(3);
  batch.end_tokens = {3, 4};
  batch.rows[1].end_until = 2;
  batch.rows[1].end_begin = 1;
  batch.rows[1].end_count = 2;  // entries 1 and 2 of a list of 2
  batch.rows[2] = batch.rows[1];
  batch.rows[2].draw_index = 2;  // past min_tokens: the slice is not read
  const std::optional<cuda::sampling_plan> plan = cuda::plan_sampling(3, 64, batch);
  REQUIRE(plan);
  REQUIRE(plan->num_work_rows == 1);
  gpu::sampling_batch too_many = batch;
  too_many.rows[1].end_count = gpu::max_end_tokens + 1;
  CHECK_FALSE(cuda::plan_sampling(3, 64, too_many));
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  ends_case c;
  c.logits.assign(3 * 64, 0.5f);
  c.batch = batch;
  const std::vector<cuda::sampled_row_dev> got = run_sampling_kernel(c.logits, c.batch, *plan);
  CHECK(got[0].status == cuda::sampled_row_status::ok);
  CHECK(got[1].status == cuda::sampled_row_status::bad_ends);
  CHECK(got[2].status == cuda::sampled_row_status::ok);
  CHECK_FALSE(cuda::to_sample_results(got.data(), got.size()));
}

TEST_CASE("cuda device: sample uploads the end tokens and matches the sim device", "[gpu]") {
  const ends_case c = make_ends_case();
  const std::unique_ptr<gpu::device> sim_device = gpu::make_sim_device(1, 512);
  const std::vector<gpu::sample_result> want = sample_on(*sim_device, c.logits, vocab, c.batch);
  REQUIRE(want.size() == c.batch.rows.size());
  for (std::size_t r = 0; r < want.size(); ++r) check_row(c, r, want[r].token);
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  check_cuda_device_samples(c.logits, vocab, c.batch, want);
}

}  // namespace courier_test_gpu_cuda_sampling_ends
