// The logit bias through the model (forward_batch::bias_tokens): every sampled position of a row
// uses the row's slice, also when it verifies drafts, and a bad slice is refused before anything
// runs.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "tests/support/fixtures.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_model_llama_bias {

using namespace courier;

namespace {

// One row of 4 tokens at position 0 that samples its last `num_sample` positions, its bias
// written into its slot (test::in_slots).
model::forward_batch biased_row(model::llama_model& m, std::int32_t num_sample,
                                float temperature) {
  model::forward_batch fb;
  model::forward_row row;
  row.tokens = {11, 12, 13, 14};
  row.block_table = test::iota_table(1);
  row.sample = true;
  row.logits = model::logits_mode::last;
  row.num_sample = num_sample;
  row.sampling.temperature = temperature;
  row.sampling.seed = 5;
  row.sampling.num_logprobs = 1;
  row.sampling.bias_begin = 1;
  row.sampling.bias_count = 2;
  fb.bias_tokens = {{3, -7.0f}, {1234, 100.0f}, {0, -100.0f}};
  fb.rows.push_back(row);
  test::in_slots(m, fb, 16);
  return fb;
}

}  // namespace

TEST_CASE("llama model: every sampled position of a biased row uses the row's bias slice",
          "[model]") {
  test::sim_model m("tiny-llama3");
  for (const float temperature : {0.0f, 1.0f}) {
    model::kv_cache cache(*m.dev, m.model->config(), 4, 16);
    const model::forward_output out = m.model->forward(biased_row(*m.model, 3, temperature), cache);
    REQUIRE(out.rows.at(0).samples.size() == 3);
    for (const gpu::sample_result& s : out.rows[0].samples) {
      CHECK(s.token == 1234);
      REQUIRE(s.top_ids.size() == 1);
      CHECK(s.top_ids[0] != 1234);  // logprobs are the raw model's: 1234 is not its best
    }
  }
}

TEST_CASE("llama model: a bad bias slice is refused before anything runs", "[model]") {
  test::sim_model m("tiny-llama3");
  model::kv_cache cache(*m.dev, m.model->config(), 4, 16);
  model::forward_batch past_end = biased_row(*m.model, 1, 0.0f);
  past_end.rows[0].sampling.bias_count = 3;  // entries 1..3 of 3
  CHECK_THROWS_AS(m.model->forward(past_end, cache), std::invalid_argument);

  model::forward_batch too_many = biased_row(*m.model, 1, 0.0f);
  too_many.bias_tokens.resize(static_cast<std::size_t>(gpu::max_bias_tokens) + 2);
  too_many.rows[0].sampling.bias_count = gpu::max_bias_tokens + 1;
  CHECK_THROWS_WITH(m.model->forward(too_many, cache), Catch::Contains("at most 300"));

  model::forward_batch outside = biased_row(*m.model, 1, 0.0f);
  outside.bias_tokens[2].token = static_cast<std::uint32_t>(m.model->config().vocab_size);
  CHECK_THROWS_WITH(m.model->forward(outside, cache), Catch::Contains("outside the vocabulary"));

  // A bias is sampled only from a slot's list (forward_batch.hpp): a row without one is refused.
  model::forward_batch no_slot = biased_row(*m.model, 1, 0.0f);
  no_slot.rows[0].bias_slot = -1;
  no_slot.rows[0].bias_init = false;
  CHECK_THROWS_WITH(m.model->forward(no_slot, cache), Catch::Contains("bias list -1"));
}

}  // namespace courier_test_gpu_model_llama_bias
