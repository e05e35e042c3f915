// Tests of the logit bias in the sim backend's sampling op (step 0 of the contract at the top of
// sim_sampling.cpp): added to the raw logit before penalties and every filter, greedy included;
// logprobs stay those of the raw logits. Expectations are computed here, independently.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "gpu/sim/sim_sampling.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_sim_sampling_bias {

namespace {

using courier::gpu::bias_token;
using courier::gpu::penalty_token;
using courier::gpu::sample_result;
using courier::gpu::sampling_batch;
using courier::gpu::sampling_row;
namespace sim = courier::gpu::sim;

constexpr float inf = std::numeric_limits<float>::infinity();

sampling_row at_temperature(float temperature, std::uint64_t seed = 7) {
  sampling_row row;
  row.temperature = temperature;
  row.seed = seed;
  return row;
}

sample_result sample_one(const std::vector<float>& logits, sampling_row row,
                         const std::vector<bias_token>& bias,
                         const std::vector<penalty_token>& penalties = {}) {
  sampling_batch batch;
  row.bias_begin = 0;
  row.bias_count = static_cast<std::int32_t>(bias.size());
  row.penalty_begin = 0;
  row.penalty_count = static_cast<std::int32_t>(penalties.size());
  batch.rows = {row};
  batch.bias_tokens = bias;
  batch.penalty_tokens = penalties;
  std::vector<sample_result> out =
      sim::sample_rows(logits.data(), 1, static_cast<std::int64_t>(logits.size()), batch);
  REQUIRE(out.size() == 1);
  return out[0];
}

std::vector<float> random_logits(std::size_t vocab, std::uint32_t seed, float spread) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-spread, spread);
  std::vector<float> out(vocab);
  for (float& l : out) l = dist(gen);
  return out;
}

std::uint32_t argmax(const std::vector<float>& x) {
  return static_cast<std::uint32_t>(std::max_element(x.begin(), x.end()) - x.begin());
}

std::vector<double> log_softmax(const std::vector<float>& logits) {
  const double m = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (float l : logits) sum += std::exp(l - m);
  std::vector<double> out;
  for (float l : logits) out.push_back(l - m - std::log(sum));
  return out;
}

// The token that the inverse CDF of u picks over softmax(x / t), by x descending (ties: lower id).
std::uint32_t inverse_cdf(const std::vector<float>& x, double t, double u) {
  std::vector<std::uint32_t> order(x.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return x[a] > x[b] || (x[a] == x[b] && a < b);
  });
  double total = 0.0;
  for (float v : x) total += std::exp((v - x[order[0]]) / t);
  double cumulative = 0.0;
  for (std::uint32_t id : order) {
    cumulative += std::exp((x[id] - x[order[0]]) / t) / total;
    if (u < cumulative) return id;
  }
  return order.back();
}

}  // namespace

TEST_CASE("logit bias: +100 forces a token, greedy and seeded", "[sampling]") {
  const std::vector<float> logits = random_logits(1000, 21, 4.0f);
  const std::uint32_t forced = 777;
  REQUIRE(argmax(logits) != forced);
  CHECK(sample_one(logits, at_temperature(0.0f), {}).token == argmax(logits));
  CHECK(sample_one(logits, at_temperature(0.0f), {{forced, 100.0f}}).token == forced);
  for (float t : {0.7f, 1.0f, 2.0f}) {
    for (std::uint64_t seed = 0; seed < 40; ++seed) {
      sampling_row row = at_temperature(t, seed);
      row.draw_index = seed * 3;
      row.top_p = seed % 2 ? 0.9f : 1.0f;
      INFO("T " << t << " seed " << seed);
      CHECK(sample_one(logits, row, {{forced, 100.0f}, {3, -2.0f}}).token == forced);
    }
  }
}

TEST_CASE("logit bias: -100 bans the argmax, so the next best is chosen", "[sampling]") {
  const std::vector<float> logits = {0.5f, 3.0f, -1.0f, 2.5f, 2.9f};
  CHECK(sample_one(logits, at_temperature(0.0f), {{1, -100.0f}}).token == 4);
  CHECK(sample_one(logits, at_temperature(0.0f), {{1, -100.0f}, {4, -100.0f}}).token == 3);
  // Seeded: the banned token is never drawn, and the others are drawn by softmax without it.
  const std::vector<float> flat = random_logits(50, 8, 1.0f);
  const std::uint32_t best = argmax(flat);
  std::vector<float> banned = flat;
  banned[best] -= 100.0f;
  for (std::uint64_t d = 0; d < 400; ++d) {
    sampling_row row = at_temperature(1.0f, 5);
    row.draw_index = d;
    const std::uint32_t token = sample_one(flat, row, {{best, -100.0f}}).token;
    REQUIRE(token != best);
    CHECK(token == inverse_cdf(banned, 1.0, sim::sampling_uniform(5, d)));
  }
}

TEST_CASE("logit bias: added before the repetition penalty, as vLLM orders them", "[sampling]") {
  // Token 1: (1.0 + 2.0) / 2 = 1.5 < 2.0 when the bias comes first; 1.0 / 2 + 2.0 = 2.5 would
  // win if the penalty came first.
  sampling_row row = at_temperature(0.0f);
  row.repetition_penalty = 2.0f;
  const std::vector<penalty_token> seen = {{1, 0, true}};
  CHECK(sample_one({2.0f, 1.0f}, row, {{1, 2.0f}}, seen).token == 0);
  CHECK(sample_one({2.0f, 1.0f}, row, {{1, 2.0f}}).token == 1);  // no penalty: 3.0 wins
  // A bias that turns a logit negative makes the penalty multiply: (0.5 - 1.0) * 2 = -1.0.
  CHECK(sample_one({-0.9f, 0.5f}, row, {{1, -1.0f}}, seen).token == 0);
  CHECK(sample_one({-1.1f, 0.5f}, row, {{1, -1.0f}}, seen).token == 1);
}

TEST_CASE("logit bias: the draw is the inverse CDF over the biased, penalised logits",
          "[sampling]") {
  const std::vector<float> logits = {0.3f, 1.2f, -0.4f, 0.9f, 1.2f, -1.5f, 0.1f};
  sampling_row row = at_temperature(0.8f, 99);
  row.repetition_penalty = 1.25f;
  row.frequency_penalty = 0.1f;
  row.presence_penalty = 0.2f;
  const std::vector<bias_token> bias = {{3, 0.75f}, {5, 2.5f}, {1, -0.5f}};
  const std::vector<penalty_token> penalties = {{3, 2, false}, {5, 0, true}, {0, 1, true}};
  std::vector<float> x = logits;
  x[3] = (0.9f + 0.75f) / 1.25f - 0.1f * 2.0f - 0.2f;
  x[5] = (-1.5f + 2.5f) / 1.25f;
  x[1] = 1.2f - 0.5f;
  x[0] = 0.3f / 1.25f - 0.1f - 0.2f;
  for (std::uint64_t d = 0; d < 300; ++d) {
    row.draw_index = d;
    const double u = sim::sampling_uniform(99, d);
    INFO("draw " << d << " u " << u);
    CHECK(sample_one(logits, row, bias, penalties).token == inverse_cdf(x, 0.8, u));
  }
}

TEST_CASE("logit bias: top-k and min-p see the biased logits", "[sampling]") {
  const std::vector<float> logits = {3.0f, 2.0f, 1.0f, 0.0f, -1.0f};
  sampling_row row = at_temperature(1.0f, 3);
  row.top_k = 1;
  for (std::uint64_t d = 0; d < 50; ++d) {
    row.draw_index = d;
    CHECK(sample_one(logits, row, {{4, 10.0f}}).token == 4);  // -1 + 10 is the one kept
  }
  row.top_k = 2;
  std::vector<int> counts(logits.size(), 0);
  for (std::uint64_t d = 0; d < 400; ++d) {
    row.draw_index = d;
    ++counts[sample_one(logits, row, {{0, -100.0f}}).token];
  }
  CHECK(counts[0] == 0);
  CHECK(counts[1] + counts[2] == 400);  // the two best after the ban
  CHECK(counts[1] > counts[2]);
  row.top_k = 0;
  row.min_p = 0.5f;  // only tokens within a factor 2 of the best: the biased token alone
  for (std::uint64_t d = 0; d < 50; ++d) {
    row.draw_index = d;
    CHECK(sample_one(logits, row, {{2, 5.0f}}).token == 2);
  }
}

TEST_CASE("logit bias: logprobs stay those of the raw logits", "[sampling]") {
  const std::vector<float> logits = random_logits(64, 4, 3.0f);
  const std::vector<double> expected = log_softmax(logits);
  std::vector<std::uint32_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  const std::uint32_t forced = order.back();  // the least likely token
  for (float t : {0.0f, 0.9f}) {
    sampling_row row = at_temperature(t, 12);
    row.num_logprobs = 4;
    row.presence_penalty = 0.5f;
    const sample_result r =
        sample_one(logits, row, {{forced, 100.0f}, {order[0], -100.0f}}, {{order[1], 1, false}});
    REQUIRE(r.token == forced);
    CHECK(r.logprob == Approx(expected[forced]).margin(1e-5));
    REQUIRE(r.top_ids.size() == 4);
    for (std::size_t i = 0; i < 4; ++i) {
      CHECK(r.top_ids[i] == order[i]);  // the banned argmax is still the raw best
      CHECK(r.top_logprobs[i] == Approx(expected[order[i]]).margin(1e-5));
    }
  }
}

TEST_CASE("logit bias: each row uses its own slice, and rows may share one", "[sampling]") {
  const std::vector<float> row_logits = {1.0f, 3.0f, 2.0f, 0.0f};
  std::vector<float> logits;
  for (int r = 0; r < 4; ++r) logits.insert(logits.end(), row_logits.begin(), row_logits.end());
  sampling_batch batch;
  batch.rows.resize(4);
  batch.bias_tokens = {{0, 5.0f}, {3, 10.0f}};
  batch.rows[1].bias_begin = 0;
  batch.rows[1].bias_count = 1;  // token 0 to 6: wins
  batch.rows[2].bias_begin = 0;
  batch.rows[2].bias_count = 2;  // token 3 to 10: wins
  batch.rows[3] = batch.rows[1];  // shares row 1's slice, as a row's draft positions do
  const std::vector<sample_result> out = sim::sample_rows(logits.data(), 4, 4, batch);
  REQUIRE(out.size() == 4);
  CHECK(out[0].token == 1);
  CHECK(out[1].token == 0);
  CHECK(out[2].token == 3);
  CHECK(out[3].token == 0);
}

TEST_CASE("logit bias: a bias does not unmask -inf or NaN logits", "[sampling]") {
  const std::vector<float> logits = {-inf, std::numeric_limits<float>::quiet_NaN(), -5.0f};
  const std::vector<bias_token> bias = {{0, 100.0f}, {1, 100.0f}};
  CHECK(sample_one(logits, at_temperature(0.0f), bias).token == 2);
  for (std::uint64_t d = 0; d < 20; ++d) {
    sampling_row row = at_temperature(1.0f, d);
    row.draw_index = d;
    CHECK(sample_one(logits, row, bias).token == 2);
  }
}

}  // namespace courier_test_gpu_sim_sampling_bias
