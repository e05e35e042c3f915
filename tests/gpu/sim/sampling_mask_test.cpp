// The allowed-token mask of the sim sampler (a grammar's), against the contract at the top of
// sim_sampling.cpp: a masked row draws exactly as the same row would with every disallowed
// logit set to -inf by hand, logprobs stay raw, and a row with nothing to draw says so.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gpu/sim/sim_sampling.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_sim_sampling_mask {

namespace {

using courier::gpu::bias_token;
using courier::gpu::mask_words_per_row;
using courier::gpu::no_allowed_token;
using courier::gpu::sample_result;
using courier::gpu::sampling_batch;
using courier::gpu::sampling_row;
namespace sim = courier::gpu::sim;

constexpr float inf = std::numeric_limits<float>::infinity();

std::vector<std::uint32_t> mask_of(const std::vector<bool>& allowed) {
  std::vector<std::uint32_t> words(
      static_cast<std::size_t>(mask_words_per_row(static_cast<std::int64_t>(allowed.size()))), 0);
  for (std::size_t t = 0; t < allowed.size(); ++t) {
    if (allowed[t]) words[t / 32] |= 1u << (t % 32);
  }
  return words;
}

sample_result sample(const std::vector<float>& logits, sampling_row row,
                     std::vector<std::uint32_t> mask_words = {},
                     std::vector<bias_token> bias = {}) {
  row.bias_begin = 0;
  row.bias_count = static_cast<std::int32_t>(bias.size());
  sampling_batch batch;
  batch.rows = {row};
  batch.bias_tokens = std::move(bias);
  batch.mask_words = std::move(mask_words);
  auto out = sim::sample_rows(logits.data(), 1, static_cast<std::int64_t>(logits.size()), batch);
  REQUIRE(out.size() == 1);
  return out[0];
}

}  // namespace

TEST_CASE("sampling mask: a masked row draws as the row with disallowed logits at -inf",
          "[sampling]") {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  const std::size_t vocab = 1000;  // not a multiple of 32: the last word is partial
  int checked = 0;
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<float> logits(vocab);
    for (float& x : logits) x = normal(rng);
    std::vector<bool> allowed(vocab);
    for (std::size_t t = 0; t < vocab; ++t) allowed[t] = rng() % (trial % 5 + 2) == 0;
    allowed[vocab - 1] = true;
    std::vector<float> by_hand = logits;
    for (std::size_t t = 0; t < vocab; ++t) {
      if (!allowed[t]) by_hand[t] = -inf;
    }
    for (float temperature : {0.0f, 0.7f, 1.5f}) {
      sampling_row row;
      row.temperature = temperature;
      row.top_p = trial % 2 ? 0.9f : 1.0f;
      row.top_k = trial % 3 ? 0 : 20;
      row.seed = static_cast<std::uint64_t>(trial);
      row.num_logprobs = 3;
      for (std::uint64_t draw = 0; draw < 8; ++draw) {
        row.draw_index = draw;
        sampling_row masked = row;
        masked.mask_begin = 0;
        const sample_result got = sample(logits, masked, mask_of(allowed));
        const sample_result want = sample(by_hand, row);
        REQUIRE(got.token == want.token);
        REQUIRE(allowed[got.token]);
        // Logprobs are the raw model's, unmasked.
        const sample_result raw = sample(logits, row);
        CHECK(got.top_ids == raw.top_ids);
        CHECK(got.logprob == Approx(logits[got.token] - std::log([&] {
                                      double s = 0;
                                      for (float x : logits) s += std::exp(double{x});
                                      return s;
                                    }())).epsilon(1e-5));
        ++checked;
      }
    }
  }
  CHECK(checked == 960);
}

TEST_CASE("sampling mask: a +100 bias cannot bring back a disallowed token", "[sampling]") {
  const std::vector<float> logits{1.0f, 2.0f, 3.0f, 0.5f};
  sampling_row row;
  row.mask_begin = 0;
  const auto mask = mask_of({true, true, false, true});
  CHECK(sample(logits, row, mask, {{2, 100.0f}}).token == 1);
  CHECK(sample(logits, row, mask, {{3, 100.0f}}).token == 3);
  row.temperature = 1.0f;
  for (std::uint64_t d = 0; d < 50; ++d) {
    row.draw_index = d;
    CHECK(sample(logits, row, mask, {{2, 100.0f}}).token != 2);
  }
}

TEST_CASE("sampling mask: nothing to draw gives no_allowed_token, never an excluded id",
          "[sampling]") {
  const std::vector<float> logits{1.0f, -inf, std::nanf(""), 0.5f};
  for (float temperature : {0.0f, 1.0f}) {
    sampling_row row;
    row.temperature = temperature;
    row.mask_begin = 0;
    row.num_logprobs = 2;
    const sample_result none = sample(logits, row, mask_of({false, false, false, false}));
    CHECK(none.token == no_allowed_token);
    CHECK(none.logprob == -inf);
    CHECK(none.top_ids.size() == 2);  // top logprobs are the raw model's, as usual
    // Allowed tokens whose logits are -inf or NaN cannot be drawn either.
    CHECK(sample(logits, row, mask_of({false, true, true, false})).token == no_allowed_token);
    CHECK(sample(logits, row, mask_of({false, true, true, true})).token == 3);
  }
  // Rows share mask slices by offset; an unmasked row in the same batch is untouched.
  sampling_batch batch;
  sampling_row masked;
  masked.mask_begin = 1;
  batch.rows = {masked, sampling_row{}};
  batch.mask_words = {0u, 0b1000u};
  const std::vector<float> two_rows{1.0f, 2.0f, 3.0f, 0.5f, 1.0f, 2.0f, 3.0f, 0.5f};
  const auto out = sim::sample_rows(two_rows.data(), 2, 4, batch);
  CHECK(out[0].token == 3);
  CHECK(out[1].token == 2);
}

}  // namespace courier_test_gpu_sim_sampling_mask
