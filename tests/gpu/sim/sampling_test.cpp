// Tests of the sim backend's sampling op against the contract at the top of sim_sampling.cpp. Every
// expectation is computed here, in double, independently of the code under test.
#include "gpu/sim/sim_sampling.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_sim_sampling {

namespace {

using courier::gpu::max_logprobs;
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

penalty_token penalised(std::uint32_t token, std::int32_t output_count, bool in_prompt) {
  penalty_token p;
  p.token = token;
  p.output_count = output_count;
  p.in_prompt = in_prompt;
  return p;
}

sample_result sample_one(const std::vector<float>& logits, sampling_row row,
                         const std::vector<penalty_token>& penalties = {}) {
  row.penalty_begin = 0;
  row.penalty_count = static_cast<std::int32_t>(penalties.size());
  // Built whole rather than assigned into empty vectors: GCC 12 at -O3 warns falsely
  // (-Wnonnull) about the memmove of a vector assigned from an initializer list.
  const sampling_batch batch{{row}, penalties};
  std::vector<sample_result> out =
      sim::sample_rows(logits.data(), 1, static_cast<std::int64_t>(logits.size()), batch);
  REQUIRE(out.size() == 1);
  return out[0];
}

// How often each token comes out over draw indices 0..num_draws-1.
std::vector<int> draw_counts(const std::vector<float>& logits, sampling_row row, int num_draws,
                             const std::vector<penalty_token>& penalties = {}) {
  std::vector<int> counts(logits.size(), 0);
  for (int d = 0; d < num_draws; ++d) {
    row.draw_index = static_cast<std::uint64_t>(d);
    ++counts[sample_one(logits, row, penalties).token];
  }
  return counts;
}

std::vector<double> log_softmax(const std::vector<float>& logits) {
  const double m = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (float l : logits) sum += std::exp(l - m);
  std::vector<double> out;
  for (float l : logits) out.push_back(l - m - std::log(sum));
  return out;
}

std::vector<double> softmax(const std::vector<double>& z) {
  const double m = *std::max_element(z.begin(), z.end());
  std::vector<double> p;
  for (double v : z) p.push_back(std::exp(v - m));
  const double sum = std::accumulate(p.begin(), p.end(), 0.0);
  for (double& v : p) v /= sum;
  return p;
}

std::vector<double> softmax_at(const std::vector<float>& logits, double temperature) {
  std::vector<double> z;
  for (float l : logits) z.push_back(l / temperature);
  return softmax(z);
}

// Logits whose softmax is exactly `probs` (up to rounding).
std::vector<float> logits_of(const std::vector<double>& probs) {
  std::vector<float> out;
  for (double p : probs) out.push_back(static_cast<float>(std::log(p)));
  return out;
}

// Token ids by value descending, ties to the lower id.
template <typename T>
std::vector<std::uint32_t> ranked(const std::vector<T>& values) {
  std::vector<std::uint32_t> ids(values.size());
  std::iota(ids.begin(), ids.end(), 0u);
  std::sort(ids.begin(), ids.end(), [&](std::uint32_t a, std::uint32_t b) {
    return values[a] > values[b] || (values[a] == values[b] && a < b);
  });
  return ids;
}

// Within `sigmas` standard deviations of a binomial(n, p) mean.
bool near_binomial(int count, int n, double p, double sigmas = 4.0) {
  const double sd = std::sqrt(n * p * (1.0 - p));
  return std::abs(count - n * p) <= sigmas * sd + 1.0;
}

std::uint64_t reference_splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double reference_uniform(std::uint64_t seed, std::uint64_t draw_index) {
  const std::uint64_t h =
      reference_splitmix64(reference_splitmix64(seed ^ (draw_index * 0x9e3779b97f4a7c15ULL)));
  return static_cast<double>(h >> 11) / 9007199254740992.0;  // 2^53
}

std::vector<float> random_logits(std::size_t vocab, std::uint32_t seed, float spread) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-spread, spread);
  std::vector<float> out(vocab);
  for (float& l : out) l = dist(gen);
  return out;
}

}  // namespace

TEST_CASE("sampling: temperature 0 picks the argmax, ties to the lowest id", "[sampling]") {
  CHECK(sample_one({0.5f, 3.0f, -1.0f, 3.0f, 2.9f}, at_temperature(0.0f)).token == 1);
  CHECK(sample_one({-2.0f, -1.0f, -1.0f}, at_temperature(-1.0f)).token == 1);
  CHECK(sample_one({4.0f, 4.0f, 4.0f, 4.0f}, at_temperature(0.0f)).token == 0);
  CHECK(sample_one({-inf, -inf, 1e-3f}, at_temperature(0.0f)).token == 2);
}

TEST_CASE("sampling: greedy with penalties picks the argmax of the hand-penalised logits",
          "[sampling]") {
  // Token 0 is best raw (2.0); repetition 1.5 makes it 2.0 / 1.5 = 1.33, under token 1's 1.4.
  sampling_row row = at_temperature(0.0f);
  row.repetition_penalty = 1.5f;
  CHECK(sample_one({2.0f, 1.4f, 0.0f}, row).token == 0);
  CHECK(sample_one({2.0f, 1.4f, 0.0f}, row, {penalised(0, 0, true)}).token == 1);
  CHECK(sample_one({2.0f, 1.3f, 0.0f}, row, {penalised(0, 0, true)}).token == 0);
}

TEST_CASE("sampling: repetition penalty divides positive logits and multiplies negative ones",
          "[sampling]") {
  sampling_row row = at_temperature(0.0f);
  row.repetition_penalty = 2.0f;
  // Positive: 2.0 becomes 1.0, so 1.1 beats it and 0.9 does not.
  CHECK(sample_one({2.0f, 1.1f}, row, {penalised(0, 1, false)}).token == 1);
  CHECK(sample_one({2.0f, 0.9f}, row, {penalised(0, 1, false)}).token == 0);
  // Negative: -1.0 becomes -2.0, so -1.9 beats it and -2.1 does not.
  CHECK(sample_one({-1.0f, -1.9f}, row, {penalised(0, 0, true)}).token == 1);
  CHECK(sample_one({-1.0f, -2.1f}, row, {penalised(0, 0, true)}).token == 0);
  // A token neither in the prompt nor in the output keeps its logit.
  CHECK(sample_one({2.0f, 1.1f}, row, {penalised(0, 0, false)}).token == 0);
}

TEST_CASE("sampling: frequency penalty scales with the count, presence applies once",
          "[sampling]") {
  sampling_row row = at_temperature(0.0f);
  row.frequency_penalty = 0.5f;
  row.presence_penalty = 0.4f;
  // 3.0 - 0.5 * 2 - 0.4 = 1.6.
  const std::vector<penalty_token> twice = {penalised(0, 2, false)};
  CHECK(sample_one({3.0f, 1.7f}, row, twice).token == 1);
  CHECK(sample_one({3.0f, 1.5f}, row, twice).token == 0);
  // In the prompt only: neither applies.
  CHECK(sample_one({3.0f, 2.9f}, row, {penalised(0, 0, true)}).token == 0);
  // Repetition first, then frequency, then presence: 3.0 / 2 - 0.5 * 2 - 0.4 = 0.1.
  row.repetition_penalty = 2.0f;
  CHECK(sample_one({3.0f, 0.15f}, row, twice).token == 1);
  CHECK(sample_one({3.0f, 0.05f}, row, twice).token == 0);
}

TEST_CASE("sampling: each row of a batch uses its own parameters and penalty slice", "[sampling]") {
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 0.0f,   // row 0
                                     1.0f, 3.0f, 2.0f, 0.0f,   // row 1
                                     1.0f, 3.0f, 2.0f, 0.0f};  // row 2
  sampling_batch batch;
  batch.rows.resize(3);
  batch.rows[1].presence_penalty = 5.0f;
  batch.rows[1].penalty_begin = 1;
  batch.rows[1].penalty_count = 1;  // token 1 only: 2 wins
  batch.rows[2].presence_penalty = 5.0f;
  batch.rows[2].penalty_begin = 0;
  batch.rows[2].penalty_count = 2;  // tokens 2 and 1: 0 wins
  batch.penalty_tokens = {penalised(2, 1, false), penalised(1, 1, false)};
  const std::vector<sample_result> out = sim::sample_rows(logits.data(), 3, 4, batch);
  REQUIRE(out.size() == 3);
  CHECK(out[0].token == 1);
  CHECK(out[1].token == 2);
  CHECK(out[2].token == 0);
}

TEST_CASE("sampling: logprobs are the raw log-softmax whatever the processing", "[sampling]") {
  const std::vector<float> logits = random_logits(50, 11, 6.0f);
  const std::vector<double> expected = log_softmax(logits);
  const std::vector<std::uint32_t> order = ranked(logits);
  sampling_row row = at_temperature(0.7f, 3);
  row.top_k = 10;
  row.repetition_penalty = 1.3f;
  row.presence_penalty = 0.5f;
  row.num_logprobs = 5;
  for (std::uint64_t d = 0; d < 20; ++d) {
    row.draw_index = d;
    const sample_result r = sample_one(logits, row, {penalised(order[0], 2, true)});
    REQUIRE(r.token < logits.size());
    CHECK(r.logprob == Approx(expected[r.token]).margin(1e-5));
    REQUIRE(r.top_ids.size() == 5);
    REQUIRE(r.top_logprobs.size() == 5);
    for (std::size_t i = 0; i < 5; ++i) {
      CHECK(r.top_ids[i] == order[i]);
      CHECK(r.top_logprobs[i] == Approx(expected[order[i]]).margin(1e-5));
    }
  }
}

TEST_CASE("sampling: top logprobs are best first, ties to the lower id, clamped in number",
          "[sampling]") {
  const std::vector<float> logits = {1.0f, 3.0f, 3.0f, 0.0f, 3.0f, 2.0f};
  sampling_row row = at_temperature(0.0f);
  row.num_logprobs = 4;
  const sample_result r = sample_one(logits, row);
  CHECK(r.token == 1);
  CHECK(r.top_ids == std::vector<std::uint32_t>{1, 2, 4, 5});
  const std::vector<double> expected = log_softmax(logits);
  REQUIRE(r.top_logprobs.size() == 4);
  CHECK(r.top_logprobs[0] == Approx(expected[1]).margin(1e-5));
  CHECK(r.top_logprobs[3] == Approx(expected[5]).margin(1e-5));

  row.num_logprobs = 0;
  CHECK(sample_one(logits, row).top_ids.empty());
  row.num_logprobs = -3;
  CHECK(sample_one(logits, row).top_logprobs.empty());
  row.num_logprobs = 50;
  const sample_result many = sample_one(random_logits(100, 5, 3.0f), row);
  CHECK(many.top_ids.size() == static_cast<std::size_t>(max_logprobs));
  CHECK(many.top_logprobs.size() == static_cast<std::size_t>(max_logprobs));
}

TEST_CASE("sampling: a scoring row answers its token's raw logprob and draws nothing",
          "[sampling]") {
  const std::vector<float> logits = random_logits(64, 21, 5.0f);
  const std::vector<double> expected = log_softmax(logits);
  const std::vector<std::uint32_t> order = ranked(logits);
  for (std::int32_t target : {0, 17, static_cast<std::int32_t>(order.back()), 63}) {
    INFO("target " << target);
    sampling_row row = at_temperature(0.9f, 5);  // a temperature and top_k that it ignores
    row.top_k = 1;
    row.score_token = target;
    row.num_logprobs = 3;
    const sample_result r = sample_one(logits, row);
    CHECK(r.token == static_cast<std::uint32_t>(target));
    CHECK(r.logprob == Approx(expected[static_cast<std::size_t>(target)]).margin(1e-5));
    REQUIRE(r.top_ids.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
      CHECK(r.top_ids[i] == order[i]);
      CHECK(r.top_logprobs[i] == Approx(expected[order[i]]).margin(1e-5));
    }
  }
  // A -inf logit scores -inf.
  std::vector<float> masked = logits;
  masked[9] = -inf;
  sampling_row row;
  row.score_token = 9;
  CHECK(sample_one(masked, row).logprob == -inf);
}

TEST_CASE("sampling: the uniform is splitmix64 of seed and draw index, mixed twice", "[sampling]") {
  CHECK(reference_splitmix64(0) == 0xe220a8397b1dcdafULL);  // the published first output
  for (std::uint64_t seed : {0ULL, 1ULL, 0xdeadbeefULL, ~0ULL}) {
    for (std::uint64_t d = 0; d < 50; ++d) {
      const double u = sim::sampling_uniform(seed, d);
      CHECK(u == reference_uniform(seed, d));
      CHECK(u >= 0.0);
      CHECK(u < 1.0);
    }
  }
}

TEST_CASE("sampling: the draw is the inverse CDF of u over probabilities in descending order",
          "[sampling]") {
  const std::vector<float> logits = {0.3f, 1.2f, -0.4f, 0.9f, 1.2f, -1.5f};
  sampling_row row = at_temperature(0.7f, 99);
  row.repetition_penalty = 1.2f;
  row.frequency_penalty = 0.1f;
  const std::vector<penalty_token> penalties = {penalised(3, 2, false), penalised(5, 0, true)};
  std::vector<float> penalised_logits = logits;
  penalised_logits[3] = 0.9f / 1.2f - 0.1f * 2.0f;
  penalised_logits[5] = -1.5f * 1.2f;
  const std::vector<double> p = softmax_at(penalised_logits, 0.7);
  const std::vector<std::uint32_t> order = ranked(p);  // ties (tokens 1 and 4): lower id first
  for (std::uint64_t d = 0; d < 300; ++d) {
    row.draw_index = d;
    const double u = reference_uniform(99, d);
    double cumulative = 0.0;
    std::uint32_t expected = order.back();
    for (std::uint32_t id : order) {
      cumulative += p[id];
      if (u < cumulative) {
        expected = id;
        break;
      }
    }
    CHECK(sample_one(logits, row, penalties).token == expected);
  }
}

TEST_CASE("sampling: the same seed and draw index always give the same token", "[sampling]") {
  const std::vector<float> logits = random_logits(1000, 3, 2.0f);
  sampling_row row = at_temperature(1.0f);
  row.top_p = 0.95f;
  std::vector<int> seen(logits.size(), 0);
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    for (std::uint64_t d = 0; d < 5; ++d) {
      row.seed = seed;
      row.draw_index = d;
      const std::uint32_t first = sample_one(logits, row).token;
      CHECK(sample_one(logits, row).token == first);
      // Alone or next to other rows, the answer is the same.
      const sampling_batch batch{{at_temperature(1.0f, seed + 1), row}, {}};
      std::vector<float> two = logits;
      two.insert(two.end(), logits.begin(), logits.end());
      CHECK(sim::sample_rows(two.data(), 2, 1000, batch)[1].token == first);
      ++seen[first];
    }
  }
  // A near-flat distribution over 1000 tokens: 100 draws are not all one token.
  CHECK(std::count_if(seen.begin(), seen.end(), [](int c) { return c > 0; }) > 50);
}

TEST_CASE("sampling: over many draw indices the tokens follow softmax(logits / T)", "[sampling]") {
  const std::vector<float> logits = {1.0f, 0.5f, 2.0f, -0.5f, 0.0f, 1.5f, -1.0f, 0.25f};
  constexpr int num_draws = 2000;
  for (float temperature : {0.8f, 1.0f, 2.5f}) {
    for (std::uint64_t seed : {1ULL, 1234ULL}) {
      const std::vector<double> p = softmax_at(logits, temperature);
      const std::vector<int> counts =
          draw_counts(logits, at_temperature(temperature, seed), num_draws);
      for (std::size_t i = 0; i < logits.size(); ++i) {
        INFO("T " << temperature << " seed " << seed << " token " << i << " count " << counts[i]
                  << " expected " << num_draws * p[i]);
        CHECK(near_binomial(counts[i], num_draws, p[i]));
      }
    }
  }
}

TEST_CASE("sampling: top_k 1 is greedy for any seed", "[sampling]") {
  std::vector<float> logits = random_logits(500, 17, 4.0f);
  logits[321] = 10.0f;
  logits[123] = 10.0f;  // a tie at the top: the lower id wins
  sampling_row row = at_temperature(1.5f);
  row.top_k = 1;
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    row.seed = seed;
    row.draw_index = seed * 7;
    CHECK(sample_one(logits, row).token == 123);
  }
}

TEST_CASE("sampling: top_k 3 only ever draws the 3 best tokens, ties to the lower ids",
          "[sampling]") {
  // Tokens 2 and 6 tie for third place: 2 stays, 6 goes.
  const std::vector<float> logits = {0.1f, 1.0f, 0.5f, -0.3f, 1.2f, 0.0f, 0.5f, 0.2f};
  sampling_row row = at_temperature(3.0f, 42);
  row.top_k = 3;
  const std::vector<int> counts = draw_counts(logits, row, 600);
  const std::vector<double> kept = softmax_at({1.0f, 0.5f, 1.2f}, 3.0);  // tokens 1, 2, 4
  CHECK(near_binomial(counts[1], 600, kept[0]));
  CHECK(near_binomial(counts[2], 600, kept[1]));
  CHECK(near_binomial(counts[4], 600, kept[2]));
  CHECK(counts[1] + counts[2] + counts[4] == 600);
}

TEST_CASE("sampling: top_p keeps the smallest prefix reaching p, renormalised", "[sampling]") {
  // Ids out of probability order: probabilities 0.5 (id 2), 0.3 (id 0), 0.15 (id 3), 0.05 (id 1).
  const std::vector<float> logits = logits_of({0.3, 0.05, 0.5, 0.15});
  constexpr int n = 1000;
  sampling_row row = at_temperature(1.0f, 5);

  row.top_p = 0.75f;  // 0.5 < 0.75 <= 0.8: ids 2 and 0
  std::vector<int> counts = draw_counts(logits, row, n);
  CHECK(counts[1] == 0);
  CHECK(counts[3] == 0);
  CHECK(near_binomial(counts[2], n, 0.5 / 0.8));

  row.top_p = 0.9f;  // 0.8 < 0.9 <= 0.95: ids 2, 0, 3
  counts = draw_counts(logits, row, n);
  CHECK(counts[1] == 0);
  CHECK(near_binomial(counts[3], n, 0.15 / 0.95));

  for (float tiny : {0.2f, 1e-6f, 0.0f}) {  // only the best
    row.top_p = tiny;
    CHECK(draw_counts(logits, row, 50)[2] == 50);
  }

  // Equal logits make exact weights: a prefix that reaches p exactly is where it stops.
  row.top_p = 0.5f;
  const std::vector<int> even = draw_counts({1.0f, 1.0f, 1.0f, 1.0f}, row, 200);
  CHECK(even[2] + even[3] == 0);
  CHECK(even[0] > 0);
  CHECK(even[1] > 0);

  // Over what top_k kept: 0.5 / 0.8 = 0.625 >= 0.6 keeps id 2 alone.
  row.top_k = 2;
  row.top_p = 0.6f;
  CHECK(draw_counts(logits, row, 50)[2] == 50);
}

TEST_CASE("sampling: min_p drops tokens under min_p times the best probability", "[sampling]") {
  const std::vector<float> logits = logits_of({0.3, 0.05, 0.5, 0.15});
  constexpr int n = 1000;
  sampling_row row = at_temperature(1.0f, 8);

  row.min_p = 0.2f;  // floor 0.1: drops id 1 (0.05)
  std::vector<int> counts = draw_counts(logits, row, n);
  CHECK(counts[1] == 0);
  CHECK(near_binomial(counts[3], n, 0.15 / 0.95));
  CHECK(near_binomial(counts[2], n, 0.5 / 0.95));

  row.min_p = 0.7f;  // floor 0.35: id 2 alone
  CHECK(draw_counts(logits, row, 100)[2] == 100);

  // After top_p 0.9 keeps 0.5, 0.3, 0.15 (renormalised: 0.526, 0.316, 0.158), min_p 0.5 has the
  // floor 0.263: id 3 goes too.
  row.top_p = 0.9f;
  row.min_p = 0.5f;
  counts = draw_counts(logits, row, n);
  CHECK(counts[1] == 0);
  CHECK(counts[3] == 0);
  CHECK(near_binomial(counts[0], n, 0.3 / 0.8));
}

TEST_CASE("sampling: masked and NaN logits are never drawn and give -inf logprobs", "[sampling]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> logits = {-inf, 0.0f, nan, 0.1f, -inf};
  sampling_row row = at_temperature(5.0f, 1);
  row.num_logprobs = 5;
  for (std::uint64_t d = 0; d < 200; ++d) {
    row.draw_index = d;
    const sample_result r = sample_one(logits, row);
    CHECK((r.token == 1 || r.token == 3));
    CHECK(std::isfinite(r.logprob));
    CHECK(r.top_ids == std::vector<std::uint32_t>{3, 1, 0, 2, 4});
    CHECK(r.top_logprobs[4] == -inf);
  }
  CHECK(sample_one(logits, at_temperature(0.0f)).token == 3);
}

TEST_CASE("sampling: a 151,936-token row works in every mode", "[sampling]") {
  constexpr std::size_t vocab = 151936;
  const std::vector<float> logits = random_logits(vocab, 2024, 8.0f);
  const std::vector<double> expected = log_softmax(logits);
  const std::vector<std::uint32_t> order = ranked(logits);
  std::vector<std::uint32_t> rank_of(vocab);
  for (std::size_t i = 0; i < vocab; ++i) rank_of[order[i]] = static_cast<std::uint32_t>(i);
  // The top-p 0.9 nucleus at T = 1, by hand.
  std::size_t nucleus = 0;
  for (double cumulative = 0.0; cumulative < 0.9; ++nucleus) {
    cumulative += std::exp(expected[order[nucleus]]);
  }
  std::vector<penalty_token> penalties;
  for (std::uint32_t i = 0; i < 64; ++i) penalties.push_back(penalised(order[i * 3], i % 3, i % 2));

  const auto check_row = [&](const sample_result& r) {
    REQUIRE(r.token < vocab);
    CHECK(std::isfinite(r.logprob));
    CHECK(r.logprob == Approx(expected[r.token]).margin(1e-5));
    REQUIRE(r.top_ids.size() == static_cast<std::size_t>(max_logprobs));
    for (std::size_t i = 0; i < r.top_ids.size(); ++i) {
      CHECK(r.top_ids[i] == order[i]);
      CHECK(r.top_logprobs[i] == Approx(expected[order[i]]).margin(1e-5));
    }
  };
  sampling_row base = at_temperature(1.0f, 77);
  base.num_logprobs = max_logprobs;
  for (std::uint64_t d = 0; d < 4; ++d) {
    base.draw_index = d;
    sampling_row row = base;
    row.temperature = 0.0f;
    const sample_result greedy = sample_one(logits, row);
    check_row(greedy);
    CHECK(greedy.token == order[0]);

    check_row(sample_one(logits, base));

    row = base;
    row.top_k = 50;
    sample_result r = sample_one(logits, row);
    check_row(r);
    CHECK(rank_of[r.token] < 50);

    row = base;
    row.top_p = 0.9f;
    r = sample_one(logits, row);
    check_row(r);
    CHECK(rank_of[r.token] < nucleus);

    row = base;
    row.min_p = 0.05f;
    r = sample_one(logits, row);
    check_row(r);
    CHECK(expected[r.token] >= std::log(0.05) + expected[order[0]]);

    row = base;
    row.temperature = 0.7f;
    row.top_k = 1000;
    row.top_p = 0.95f;
    row.min_p = 0.01f;
    row.repetition_penalty = 1.1f;
    row.frequency_penalty = 0.2f;
    row.presence_penalty = 0.3f;
    r = sample_one(logits, row, penalties);
    check_row(r);
    CHECK(rank_of[r.token] < 1000 + penalties.size());

    row = base;
    row.temperature = 1e-20f;  // greedy in effect, through the sampling path
    CHECK(sample_one(logits, row).token == order[0]);
    row.temperature = 100.0f;  // near-flat
    check_row(sample_one(logits, row));
  }
}

TEST_CASE("sampling: at 151,936 tokens the draw is still the inverse CDF of u", "[sampling]") {
  constexpr std::size_t vocab = 151936;
  const std::vector<float> logits = random_logits(vocab, 31, 8.0f);
  const std::vector<std::uint32_t> order = ranked(logits);
  const std::vector<double> p = softmax_at(logits, 0.9);
  for (std::size_t top_k : {std::size_t{0}, std::size_t{2000}}) {
    // Cumulative probability before each rank, over what top_k keeps, renormalised.
    const std::size_t kept = top_k > 0 ? top_k : vocab;
    std::vector<double> before(kept + 1, 0.0);
    for (std::size_t r = 0; r < kept; ++r) before[r + 1] = before[r] + p[order[r]];
    for (double& b : before) b /= before[kept];
    std::vector<std::size_t> rank_of(vocab, vocab);
    for (std::size_t r = 0; r < kept; ++r) rank_of[order[r]] = r;

    sampling_row row = at_temperature(0.9f, 1000 + top_k);
    row.top_k = static_cast<std::int32_t>(top_k);
    for (std::uint64_t d = 0; d < 25; ++d) {
      row.draw_index = d;
      const double u = reference_uniform(row.seed, d);
      const std::size_t r = rank_of[sample_one(logits, row).token];
      INFO("top_k " << top_k << " draw " << d << " u " << u << " rank " << r);
      REQUIRE(r < kept);
      // The sampler's exp is float: allow its rounding, far below one token's probability here.
      CHECK(before[r] - 1e-6 <= u);
      CHECK(u <= before[r + 1] + 1e-6);
    }
  }
}

TEST_CASE("sampling: tied logits are drawn in id order, with and without top_p", "[sampling]") {
  constexpr std::size_t vocab = 151936;
  const std::vector<float> logits(vocab, 0.25f);
  sampling_row row = at_temperature(1.0f, 5);
  for (std::uint64_t d = 0; d < 10; ++d) {
    row.draw_index = d;
    const double u = reference_uniform(5, d);
    row.top_p = 1.0f;
    const double expected = std::floor(u * vocab);
    CHECK(std::abs(sample_one(logits, row).token - expected) <= 1.0);
    row.top_p = 0.5f;  // keeps ids below vocab / 2
    CHECK(std::abs(sample_one(logits, row).token - std::floor(u * vocab / 2)) <= 1.0);
  }
}

}  // namespace courier_test_gpu_sim_sampling
