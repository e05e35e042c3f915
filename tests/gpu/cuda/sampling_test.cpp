// Tests of the CUDA sampler against the sim backend's sample op (the contract at the top of
// gpu/sim/sim_sampling.cpp) on random rows. The plan, the shared arithmetic and the result
// conversion are checked on every machine; the kernel only where a GPU is present.
#include "gpu/cuda/kernels/sampling.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "gpu/cuda/cuda_check.hpp"
#include "gpu/cuda/kernels/sampling_math.hpp"
#include "gpu/device.hpp"
#include "gpu/sim/sim_sampling.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_cuda_sampling {

namespace {

namespace gpu = courier::gpu;
namespace cuda = courier::gpu::cuda;
namespace sim = courier::gpu::sim;

constexpr float inf = std::numeric_limits<float>::infinity();
constexpr float qnan = std::numeric_limits<float>::quiet_NaN();

struct cuda_free {
  void operator()(void* p) const noexcept { cudaFree(p); }
};
using cuda_buffer = std::unique_ptr<void, cuda_free>;

cuda_buffer cuda_alloc(std::size_t size_bytes) {
  void* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(size_bytes, 1)));
  return cuda_buffer(p);
}

template <class T>
cuda_buffer cuda_put(const std::vector<T>& v) {
  cuda_buffer b = cuda_alloc(v.size() * sizeof(T));
  if (!v.empty()) {
    CUDA_CHECK(cudaMemcpy(b.get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  return b;
}

gpu::sampling_row row_with(float temperature, std::uint64_t seed) {
  gpu::sampling_row row;
  row.temperature = temperature;
  row.seed = seed;
  row.draw_index = seed % 1000;
  return row;
}

// One batch of random rows over every option combination, and what the sim says about it.
struct sampling_case {
  std::int64_t vocab = 0;
  std::vector<float> logits;  // [rows, vocab]
  gpu::sampling_batch batch;
  std::vector<gpu::sample_result> want;
};

// Row styles: normal logits; logits on a 1/8 grid (many ties, as bf16 logits have); one dominant
// token; all but a handful masked; all masked. Each with some NaN and -inf entries.
std::vector<float> random_row(std::int64_t vocab, int style, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.0f, style == 0 ? 2.0f : 3.0f);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<float> row(static_cast<std::size_t>(vocab));
  for (float& x : row) {
    x = normal(rng);
    if (style == 1) x = std::round(x * 8.0f) / 8.0f;
    const double m = unit(rng);
    if (m < 0.01)
      x = qnan;
    else if (m < 0.03)
      x = -inf;
  }
  if (style == 2) row[static_cast<std::size_t>(rng() % row.size())] = 25.0f;
  if (style == 3) {
    std::vector<float> masked(row.size(), -inf);
    for (int i = 0; i < 7; ++i) masked[rng() % row.size()] = normal(rng);
    masked[rng() % row.size()] = qnan;
    row = masked;
  }
  if (style == 4) std::fill(row.begin(), row.end(), -inf);
  return row;
}

// Rows: every subset of {top-k, top-p, min-p, penalties, logit bias} at temperature 0, 0.7 and
// 1.3, each with a few seeds; logprobs 0, 5 or 20 in turn; a style per row. Biases are moderate,
// with now and then a -100 on the row's argmax or a +100; some biased rows share the slice of the
// biased row before them, as a row's draft positions do.
sampling_case make_case(std::int64_t vocab, int seeds_per_combination, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  sampling_case c;
  c.vocab = vocab;
  const float temperatures[] = {0.0f, 0.7f, 1.3f};
  const std::int32_t top_ks[] = {1, 7, 50, 1000};
  const float top_ps[] = {0.9f, 0.5f, 0.0f, 0.99f};
  const float min_ps[] = {0.05f, 0.3f, 1.5f};
  const std::int32_t num_logprobs[] = {0, 5, 20};
  int n = 0;
  std::int32_t last_bias_begin = -1, last_bias_count = 0;
  for (int options = 0; options < 32; ++options) {
    for (float t : temperatures) {
      for (int s = 0; s < seeds_per_combination; ++s, ++n) {
        gpu::sampling_row row = row_with(t, rng());
        if (options & 1) row.top_k = top_ks[n % 4];
        if (options & 2) row.top_p = top_ps[n % 4];
        if (options & 4) row.min_p = min_ps[n % 3];
        if (options & 8) {
          row.repetition_penalty = n % 2 ? 1.3f : 0.8f;
          row.frequency_penalty = 0.25f;
          row.presence_penalty = n % 3 ? 0.5f : -0.75f;
          row.penalty_begin = static_cast<std::int32_t>(c.batch.penalty_tokens.size());
          row.penalty_count = 1 + static_cast<std::int32_t>(rng() % 40);
          std::vector<std::uint32_t> tokens;  // distinct
          while (tokens.size() < static_cast<std::size_t>(row.penalty_count)) {
            const auto t = static_cast<std::uint32_t>(rng() % static_cast<std::uint64_t>(vocab));
            if (std::find(tokens.begin(), tokens.end(), t) == tokens.end()) tokens.push_back(t);
          }
          for (std::int32_t j = 0; j < row.penalty_count; ++j) {
            gpu::penalty_token p;
            p.token = tokens[static_cast<std::size_t>(j)];
            p.output_count = static_cast<std::int32_t>(rng() % 4);
            p.in_prompt = rng() % 2 == 0;
            c.batch.penalty_tokens.push_back(p);
          }
        }
        row.num_logprobs = num_logprobs[n % 3];
        const int style = n % 13 == 12 ? 4 : n % 7 == 6 ? 3 : n % 3;
        const std::vector<float> logits = random_row(vocab, n % 5 == 4 ? 2 : style, rng);
        if (options & 16) {
          if (last_bias_begin >= 0 && n % 3 == 0) {
            row.bias_begin = last_bias_begin;
            row.bias_count = last_bias_count;
          } else {
            row.bias_begin = static_cast<std::int32_t>(c.batch.bias_tokens.size());
            row.bias_count = 1 + static_cast<std::int32_t>(rng() % 60);
            std::vector<std::uint32_t> tokens;  // distinct
            if (n % 4 == 1) {  // ban the argmax
              tokens.push_back(static_cast<std::uint32_t>(
                  std::max_element(logits.begin(), logits.end()) - logits.begin()));
            }
            while (tokens.size() < static_cast<std::size_t>(row.bias_count)) {
              const auto t = static_cast<std::uint32_t>(rng() % static_cast<std::uint64_t>(vocab));
              if (std::find(tokens.begin(), tokens.end(), t) == tokens.end()) tokens.push_back(t);
            }
            std::uniform_real_distribution<float> moderate(-6.0f, 6.0f);
            for (std::size_t j = 0; j < tokens.size(); ++j) {
              float bias = moderate(rng);
              if (j == 0 && n % 4 == 1) bias = -100.0f;
              if (j == 1 && n % 8 == 3) bias = 100.0f;
              c.batch.bias_tokens.push_back({tokens[j], bias});
            }
            last_bias_begin = row.bias_begin;
            last_bias_count = row.bias_count;
          }
        }
        c.batch.rows.push_back(row);
        c.logits.insert(c.logits.end(), logits.begin(), logits.end());
      }
    }
  }
  // Scoring rows (prompt logprobs): a given token's raw logprob and the top-N, nothing drawn,
  // whatever temperature they carry; targets include the row's argmax, a -inf and a NaN logit.
  for (int k = 0; k < 12; ++k, ++n) {
    gpu::sampling_row row = row_with(k % 2 ? 0.8f : 0.0f, rng());
    std::vector<float> logits = random_row(vocab, k % 3, rng);
    const auto target = static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(vocab));
    if (k == 3) logits[static_cast<std::size_t>(target)] = -inf;
    if (k == 4) logits[static_cast<std::size_t>(target)] = qnan;
    row.score_token = k == 5 ? static_cast<std::int32_t>(std::max_element(logits.begin(), logits.end()) -
                                                         logits.begin())
                             : target;
    row.num_logprobs = num_logprobs[k % 3];
    c.batch.rows.push_back(row);
    c.logits.insert(c.logits.end(), logits.begin(), logits.end());
  }
  const std::unique_ptr<gpu::device> sim_device = gpu::make_sim_device(1, 512);
  const std::int64_t num_rows = static_cast<std::int64_t>(c.batch.rows.size());
  gpu::device_buffer logits = sim_device->allocate(c.logits.size() * sizeof(float));
  sim_device->upload(logits.data(), c.logits.data(), c.logits.size() * sizeof(float));
  c.want = sim_device->sample(logits.view(gpu::dtype::f32, num_rows, vocab), c.batch);
  return c;
}

// The cumulative probabilities F[j] before position j of the row's live tokens by penalised
// logit descending (ties: lower id first), over the tokens that the row's filters keep, computed
// plainly in double; and each token's position in that order.
struct reference_cdf {
  std::vector<double> before;          // [num_live + 1]
  std::vector<std::int64_t> position;  // [vocab]: -1 when not live
};

reference_cdf make_reference_cdf(const float* raw, std::int64_t vocab, const gpu::sampling_row& row,
                                 const std::vector<gpu::penalty_token>& penalties,
                                 const std::vector<gpu::bias_token>& bias) {
  std::vector<float> x(raw, raw + vocab);
  for (std::int32_t j = 0; j < row.bias_count; ++j) {
    const gpu::bias_token& b = bias[static_cast<std::size_t>(row.bias_begin + j)];
    x[b.token] += b.bias;
  }
  for (std::int32_t j = 0; j < row.penalty_count; ++j) {
    const gpu::penalty_token& p = penalties[static_cast<std::size_t>(row.penalty_begin + j)];
    float& l = x[p.token];
    if (row.repetition_penalty != 1.0f && (p.in_prompt || p.output_count > 0)) {
      l = l > 0.0f ? l / row.repetition_penalty : l * row.repetition_penalty;
    }
    l -= row.frequency_penalty * static_cast<float>(p.output_count);
    if (p.output_count > 0) l -= row.presence_penalty;
  }
  std::vector<std::uint32_t> order;
  for (std::int64_t i = 0; i < vocab; ++i) {
    if (x[static_cast<std::size_t>(i)] > -inf) order.push_back(static_cast<std::uint32_t>(i));
  }
  std::sort(order.begin(), order.end(), [&x](std::uint32_t a, std::uint32_t b) {
    return x[a] > x[b] || (x[a] == x[b] && a < b);
  });
  reference_cdf ref;
  ref.position.assign(static_cast<std::size_t>(vocab), -1);
  for (std::size_t j = 0; j < order.size(); ++j) {
    ref.position[order[j]] = static_cast<std::int64_t>(j);
  }
  std::vector<double> w(order.size(), 0.0);
  std::size_t kept = order.size();
  if (row.top_k > 0) kept = std::min(kept, static_cast<std::size_t>(row.top_k));
  double total = 0.0;
  for (std::size_t j = 0; j < kept; ++j) {
    w[j] = std::exp((static_cast<double>(x[order[j]]) - x[order[0]]) / row.temperature);
    total += w[j];
  }
  if (row.top_p < 1.0f) {
    double cumulative = 0.0;
    for (std::size_t j = 0; j < kept; ++j) {
      cumulative += w[j];
      if (cumulative >= static_cast<double>(row.top_p) * total) {
        kept = j + 1;
        break;
      }
    }
  }
  for (std::size_t j = 0; j < kept; ++j) {
    if (row.min_p > 0.0f && w[j] < std::min(static_cast<double>(row.min_p), 1.0)) kept = j;
  }
  double kept_total = 0.0;
  for (std::size_t j = 0; j < kept; ++j) kept_total += w[j];
  ref.before.assign(order.size() + 1, 1.0);
  double cumulative = 0.0;
  for (std::size_t j = 0; j <= kept && j <= order.size(); ++j) {
    ref.before[j] = cumulative / kept_total;
    if (j < kept) cumulative += w[j];
  }
  return ref;
}

// Whether two different draws of a row are within rounding of each other: both tokens live, and
// u within 1e-6 of every CDF boundary between them.
bool within_rounding(const reference_cdf& ref, double u, std::uint32_t a, std::uint32_t b) {
  if (a >= ref.position.size() || b >= ref.position.size()) return false;
  const std::int64_t pa = ref.position[a];
  const std::int64_t pb = ref.position[b];
  if (pa < 0 || pb < 0) return false;
  for (std::int64_t j = std::min(pa, pb) + 1; j <= std::max(pa, pb); ++j) {
    if (std::abs(u - ref.before[static_cast<std::size_t>(j)]) > 1e-6) return false;
  }
  return true;
}

bool logprobs_close(float got, float want) {
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::abs(got - want) <= 1e-4f;
}

std::vector<cuda::sampled_row_dev> run_on_gpu(const sampling_case& c) {
  const std::int64_t num_rows = static_cast<std::int64_t>(c.batch.rows.size());
  const std::optional<cuda::sampling_plan> plan = cuda::plan_sampling(num_rows, c.vocab, c.batch);
  REQUIRE(plan);
  cuda_buffer logits = cuda_put(c.logits);
  cuda_buffer rows = cuda_put(c.batch.rows);
  cuda_buffer penalties = cuda_put(c.batch.penalty_tokens);
  cuda_buffer bias = cuda_put(c.batch.bias_tokens);
  cuda_buffer workspace = cuda_alloc(plan->workspace_bytes);
  cuda_buffer out = cuda_alloc(plan->output_bytes);
  cuda_buffer tokens = cuda_alloc(static_cast<std::size_t>(num_rows) * sizeof(std::int32_t));
  CUDA_CHECK(cudaMemset(out.get(), 0xFF, plan->output_bytes));  // every byte must be written
  CUDA_CHECK(cuda::launch_sampling(*plan, static_cast<const float*>(logits.get()),
                                   static_cast<const gpu::sampling_row*>(rows.get()),
                                   static_cast<const gpu::penalty_token*>(penalties.get()),
                                   static_cast<const gpu::bias_token*>(bias.get()), workspace.get(),
                                   static_cast<cuda::sampled_row_dev*>(out.get()),
                                   static_cast<std::int32_t*>(tokens.get()), nullptr));
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<cuda::sampled_row_dev> got(static_cast<std::size_t>(num_rows));
  CUDA_CHECK(cudaMemcpy(got.data(), out.get(), plan->output_bytes, cudaMemcpyDeviceToHost));
  std::vector<std::int32_t> alone(static_cast<std::size_t>(num_rows));
  CUDA_CHECK(cudaMemcpy(alone.data(), tokens.get(), alone.size() * sizeof(std::int32_t),
                        cudaMemcpyDeviceToHost));
  for (std::size_t r = 0; r < got.size(); ++r) {  // tokens_out holds each row's token alone
    REQUIRE(static_cast<std::uint32_t>(alone[r]) == got[r].token);
  }
  return got;
}

// Compares every row with the sim; returns how many sampled rows differed within rounding.
int require_matches_sim(const sampling_case& c, const std::vector<gpu::sample_result>& got) {
  REQUIRE(got.size() == c.want.size());
  int within_rounding_count = 0;
  for (std::size_t r = 0; r < got.size(); ++r) {
    const gpu::sampling_row& row = c.batch.rows[r];
    INFO("vocab " << c.vocab << " row " << r << ": T=" << row.temperature << " top_k=" << row.top_k
                  << " top_p=" << row.top_p << " min_p=" << row.min_p
                  << " penalties=" << row.penalty_count << " bias=" << row.bias_count
                  << " logprobs=" << row.num_logprobs);
    const gpu::sample_result& g = got[r];
    const gpu::sample_result& w = c.want[r];
    REQUIRE(g.top_ids == w.top_ids);
    REQUIRE(g.top_logprobs.size() == w.top_logprobs.size());
    for (std::size_t i = 0; i < g.top_logprobs.size(); ++i) {
      INFO("top " << i);
      REQUIRE(logprobs_close(g.top_logprobs[i], w.top_logprobs[i]));
    }
    if (g.token != w.token) {
      INFO("cuda token " << g.token << ", sim token " << w.token);
      REQUIRE(row.temperature > 0.0f);
      const reference_cdf ref =
          make_reference_cdf(c.logits.data() + static_cast<std::ptrdiff_t>(r) * c.vocab, c.vocab,
                             row, c.batch.penalty_tokens, c.batch.bias_tokens);
      REQUIRE(
          within_rounding(ref, sim::sampling_uniform(row.seed, row.draw_index), g.token, w.token));
      ++within_rounding_count;
      continue;
    }
    REQUIRE(logprobs_close(g.logprob, w.logprob));
  }
  return within_rounding_count;
}

}  // namespace

TEST_CASE("cuda sampling: the plan makes working copies for the rows with penalties or bias only",
          "[cuda]") {
  gpu::sampling_batch batch;
  batch.rows.resize(6);
  batch.rows[1].penalty_count = 2;
  batch.rows[3].penalty_count = 1;
  batch.rows[3].penalty_begin = 2;
  batch.rows[3].bias_count = 1;
  batch.rows[4].bias_count = 2;
  batch.penalty_tokens.resize(3);
  batch.bias_tokens.resize(2);
  const std::optional<cuda::sampling_plan> plan = cuda::plan_sampling(6, 151936, batch);
  REQUIRE(plan);
  CHECK(plan->num_rows == 6);
  CHECK(plan->vocab == 151936);
  CHECK(plan->id_bits == 18);
  CHECK(plan->num_penalty_tokens == 3);
  CHECK(plan->num_bias_tokens == 2);
  CHECK(plan->num_work_rows == 3);
  CHECK(plan->work_bytes == 3u * 151936u * sizeof(float));
  CHECK(plan->workspace_bytes >= plan->work_bytes);
  CHECK(plan->workspace_bytes % 256 == 0);
  CHECK(plan->output_bytes == 6 * sizeof(cuda::sampled_row_dev));

  gpu::sampling_batch plain;
  plain.rows.resize(3);
  const std::optional<cuda::sampling_plan> greedy = cuda::plan_sampling(3, 2048, plain);
  REQUIRE(greedy);
  CHECK(greedy->id_bits == 11);
  CHECK(greedy->workspace_bytes == 0);
  gpu::sampling_batch one;
  one.rows.resize(1);
  const std::optional<cuda::sampling_plan> single = cuda::plan_sampling(1, 1, one);
  REQUIRE(single);
  CHECK(single->id_bits == 0);

  CHECK_FALSE(cuda::plan_sampling(4, 2048, plain));  // rows.size() != 4
  gpu::sampling_batch scoring;
  scoring.rows.resize(2);
  scoring.rows[1].score_token = 2047;
  CHECK(cuda::plan_sampling(2, 2048, scoring));
  scoring.rows[1].score_token = 2048;  // outside the vocabulary
  CHECK_FALSE(cuda::plan_sampling(2, 2048, scoring));
  scoring.rows[1].score_token = 5;
  scoring.rows[1].bias_count = 1;  // a scoring row scores the raw logits
  scoring.bias_tokens.resize(1);
  CHECK_FALSE(cuda::plan_sampling(2, 2048, scoring));
  CHECK_FALSE(cuda::plan_sampling(3, 0, plain));
  CHECK_FALSE(cuda::plan_sampling(3, std::int64_t{1} << 31, plain));
}

TEST_CASE("cuda sampling: the device's uniform equals the sim's for many seeds and draw indices",
          "[cuda]") {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t seed = i < 1000 ? static_cast<std::uint64_t>(i) : rng();
    const std::uint64_t index = i % 3 == 0 ? static_cast<std::uint64_t>(i) : rng();
    const double u = cuda::sampling_uniform(seed, index);
    REQUIRE(u == sim::sampling_uniform(seed, index));
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    REQUIRE(static_cast<double>(cuda::sampling_uniform_bits(seed, index)) * 0x1.0p-53 == u);
  }
}

TEST_CASE("cuda sampling: the weights' exp is within 2 ulp of exp, monotone, and 0 below -87",
          "[cuda]") {
  std::mt19937 rng(3);
  std::vector<float> xs = {-86.999f, -80.0f, -1e-30f, -0.5f};
  std::uniform_real_distribution<float> dist(-87.0f, 0.0f);
  for (int i = 0; i < 200000; ++i) xs.push_back(dist(rng));
  std::sort(xs.begin(), xs.end());
  int too_far = 0;
  int not_monotone = 0;
  float previous = 0.0f;
  for (const float x : xs) {
    const float e = cuda::exp_nonpositive(x);
    const double want = std::exp(static_cast<double>(x));
    const double ulp = std::nextafter(static_cast<float>(want), inf) - static_cast<float>(want);
    too_far += std::abs(e - want) > 2.0 * ulp ? 1 : 0;
    not_monotone += e < previous ? 1 : 0;
    previous = e;
  }
  CHECK(too_far == 0);
  CHECK(not_monotone == 0);
  CHECK(cuda::exp_nonpositive(0.0f) == 1.0f);
  CHECK(cuda::exp_nonpositive(-0.0f) == 1.0f);
  CHECK(cuda::exp_nonpositive(-87.0f) == 0.0f);
  CHECK(cuda::exp_nonpositive(-inf) == 0.0f);
  CHECK(cuda::exp_nonpositive(qnan) == 0.0f);
}

TEST_CASE("cuda sampling: ordered keys sort as the floats, NaN as -inf and -0 as +0", "[cuda]") {
  const std::vector<float> ascending = {-inf, -3e38f, -2.5f, -1e-40f, 0.0f, 1e-40f, 1.0f, 3e38f};
  for (std::size_t i = 1; i < ascending.size(); ++i) {
    CHECK(cuda::sampling_ordered_key(ascending[i - 1]) < cuda::sampling_ordered_key(ascending[i]));
  }
  CHECK(cuda::sampling_ordered_key(qnan) == cuda::sampling_ordered_key(-inf));
  CHECK(cuda::sampling_ordered_key(-qnan) == cuda::sampling_ordered_key(-inf));
  CHECK(cuda::sampling_ordered_key(-0.0f) == cuda::sampling_ordered_key(0.0f));
}

TEST_CASE("cuda sampling: results convert to sample_result, and a bad status fails the batch",
          "[cuda]") {
  std::vector<cuda::sampled_row_dev> rows(2);
  std::memset(rows.data(), 0, rows.size() * sizeof(cuda::sampled_row_dev));
  rows[0].token = 7;
  rows[0].logprob = -0.5f;
  rows[0].num_top = 2;
  rows[0].top_ids[0] = 7;
  rows[0].top_ids[1] = 3;
  rows[0].top_logprobs[0] = -0.5f;
  rows[0].top_logprobs[1] = -1.5f;
  rows[1].token = 1;
  const auto results = cuda::to_sample_results(rows.data(), rows.size());
  REQUIRE(results);
  REQUIRE(results->size() == 2);
  CHECK((*results)[0].token == 7);
  CHECK((*results)[0].logprob == -0.5f);
  CHECK((*results)[0].top_ids == std::vector<std::uint32_t>{7, 3});
  CHECK((*results)[0].top_logprobs == std::vector<float>{-0.5f, -1.5f});
  CHECK((*results)[1].top_ids.empty());
  rows[1].status = cuda::sampled_row_status::plan_mismatch;
  CHECK_FALSE(cuda::to_sample_results(rows.data(), rows.size()));
}

TEST_CASE("cuda sampling: every option combination matches the sim backend on random rows",
          "[gpu]") {
  // Rows and the sim's answers first, so that this part runs on every machine.
  std::vector<sampling_case> cases;
  cases.push_back(make_case(2048, 6, 2048));
  cases.push_back(make_case(151936, 2, 151936));
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  for (const sampling_case& c : cases) {
    const std::vector<cuda::sampled_row_dev> first = run_on_gpu(c);
    const std::optional<std::vector<gpu::sample_result>> got =
        cuda::to_sample_results(first.data(), first.size());
    REQUIRE(got);
    const int within_rounding_count = require_matches_sim(c, *got);
    // Each differs only where u falls within rounding of a boundary: it should almost never.
    CHECK(within_rounding_count <= 1);

    // Deterministic: a second launch gives the same bits.
    const std::vector<cuda::sampled_row_dev> second = run_on_gpu(c);
    REQUIRE(std::memcmp(first.data(), second.data(),
                        first.size() * sizeof(cuda::sampled_row_dev)) == 0);
  }
}

TEST_CASE("cuda sampling: a row with penalties the plan did not count reports plan_mismatch",
          "[gpu]") {
  gpu::sampling_batch planned;
  planned.rows.resize(2);
  const std::optional<cuda::sampling_plan> plan = cuda::plan_sampling(2, 64, planned);
  REQUIRE(plan);
  REQUIRE(plan->workspace_bytes == 0);
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  gpu::sampling_batch launched = planned;
  launched.rows[1].penalty_count = 1;
  launched.penalty_tokens.resize(1);
  cuda::sampling_plan stale = *plan;
  stale.num_penalty_tokens = 1;
  cuda_buffer logits = cuda_put(std::vector<float>(2 * 64, 0.5f));
  cuda_buffer rows = cuda_put(launched.rows);
  cuda_buffer penalties = cuda_put(launched.penalty_tokens);
  cuda_buffer out = cuda_alloc(plan->output_bytes);
  CUDA_CHECK(cuda::launch_sampling(stale, static_cast<const float*>(logits.get()),
                                   static_cast<const gpu::sampling_row*>(rows.get()),
                                   static_cast<const gpu::penalty_token*>(penalties.get()), nullptr,
                                   nullptr, static_cast<cuda::sampled_row_dev*>(out.get()), nullptr,
                                   nullptr));
  std::vector<cuda::sampled_row_dev> got(2);
  CUDA_CHECK(cudaMemcpy(got.data(), out.get(), plan->output_bytes, cudaMemcpyDeviceToHost));
  CHECK(got[0].status == cuda::sampled_row_status::ok);
  CHECK(got[0].token == 0);  // greedy over equal logits: the lowest id
  CHECK(got[1].status == cuda::sampled_row_status::plan_mismatch);
  CHECK_FALSE(cuda::to_sample_results(got.data(), got.size()));
}

TEST_CASE("cuda sampling: the plan refuses a penalty list the batch does not have", "[cuda]") {
  gpu::sampling_batch b;
  b.rows.resize(2);
  b.rows[1].penalty_list = 0;
  CHECK_FALSE(cuda::plan_sampling(2, 64, b));  // no lists
  std::vector<gpu::penalty_token> lists(8);
  std::vector<std::int32_t> lens = {1, 2};
  b.penalty_lists = lists.data();  // only the plan looks at them here: no launch
  b.penalty_list_lens = lens.data();
  b.penalty_list_stride = 4;
  b.num_penalty_lists = 2;
  const auto plan = cuda::plan_sampling(2, 64, b);
  REQUIRE(plan);
  CHECK(plan->num_work_rows == 1);  // the listed row gets a working copy
  CHECK(plan->penalty_lists == lists.data());
  b.rows[1].penalty_list = 2;
  CHECK_FALSE(cuda::plan_sampling(2, 64, b));
  b.rows[1].penalty_list = 1;
  b.rows[1].penalty_count = 1;  // a list and a slice
  CHECK_FALSE(cuda::plan_sampling(2, 64, b));
  b.rows[1].penalty_count = 0;
  b.rows[0].bias_list = 0;  // a bias list, and the batch has none
  b.rows[0].bias_count = 3;
  CHECK_FALSE(cuda::plan_sampling(2, 64, b));
  std::vector<gpu::bias_token> bias(gpu::max_bias_tokens);
  b.bias_lists = bias.data();
  b.num_bias_lists = 1;
  REQUIRE(cuda::plan_sampling(2, 64, b));
  b.rows[0].bias_count = gpu::max_bias_tokens + 1;
  CHECK_FALSE(cuda::plan_sampling(2, 64, b));
}

TEST_CASE("cuda sampling: rows whose penalties and bias are lists kept on the device match the "
          "sim with the same entries as slices", "[gpu]") {
  const sampling_case c = make_case(2048, 3, 4242);
  // Each penalised row's entries become a list of its own, followed by entries that would change
  // the row's result if the kernel read past the list's length.
  sampling_case listed = c;
  std::int32_t stride = 1;
  for (const gpu::sampling_row& row : c.batch.rows) stride = std::max(stride, row.penalty_count + 2);
  std::vector<gpu::penalty_token> lists;
  std::vector<std::int32_t> lens;
  for (gpu::sampling_row& row : listed.batch.rows) {
    if (row.penalty_count == 0) continue;
    row.penalty_list = static_cast<std::int32_t>(lens.size());
    lens.push_back(row.penalty_count);
    lists.insert(lists.end(), c.batch.penalty_tokens.begin() + row.penalty_begin,
                 c.batch.penalty_tokens.begin() + row.penalty_begin + row.penalty_count);
    for (std::int32_t j = row.penalty_count; j < stride; ++j) {
      lists.push_back({static_cast<std::uint32_t>(j), 40, 1});
    }
    row.penalty_begin = 0;
    row.penalty_count = 0;
  }
  REQUIRE(lens.size() > 10);
  listed.batch.penalty_tokens.clear();
  // Each biased row's bias becomes a list of its own too, followed by +100 on token 0.
  std::vector<gpu::bias_token> bias_lists;
  std::int32_t num_bias_lists = 0;
  for (gpu::sampling_row& row : listed.batch.rows) {
    if (row.bias_count == 0) continue;
    row.bias_list = num_bias_lists++;
    const auto first = c.batch.bias_tokens.begin() + row.bias_begin;
    bias_lists.insert(bias_lists.end(), first, first + row.bias_count);
    bias_lists.resize(static_cast<std::size_t>(num_bias_lists) * gpu::max_bias_tokens,
                      gpu::bias_token{0, 100.0f});
    row.bias_begin = 0;
  }
  REQUIRE(num_bias_lists > 10);
  listed.batch.bias_tokens.clear();
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  cuda_buffer lists_dev = cuda_put(lists), lens_dev = cuda_put(lens);
  listed.batch.penalty_lists = static_cast<const gpu::penalty_token*>(lists_dev.get());
  listed.batch.penalty_list_lens = static_cast<const std::int32_t*>(lens_dev.get());
  listed.batch.penalty_list_stride = stride;
  listed.batch.num_penalty_lists = static_cast<std::int32_t>(lens.size());
  cuda_buffer bias_dev = cuda_put(bias_lists);
  listed.batch.bias_lists = static_cast<const gpu::bias_token*>(bias_dev.get());
  listed.batch.num_bias_lists = num_bias_lists;
  const std::vector<cuda::sampled_row_dev> out = run_on_gpu(listed);
  const std::optional<std::vector<gpu::sample_result>> got =
      cuda::to_sample_results(out.data(), out.size());
  REQUIRE(got);
  CHECK(require_matches_sim(c, *got) <= 1);
}

}  // namespace courier_test_gpu_cuda_sampling
