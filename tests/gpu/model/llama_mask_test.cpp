// Allowed-token masks through the model (forward_batch::mask_words): each sampled position of a
// row has its own mask (what a grammar allows after the drafts before it), a mask with nothing
// allowed gives no_allowed_token, and a mask past the batch's words is refused before anything
// runs.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "tests/support/fixtures.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_model_llama_mask {

using namespace courier;

namespace {

// One row of 4 tokens at position 0 sampling its last `allowed.size()` positions; position j
// may only draw allowed[j] (no token at all when it is negative).
model::forward_batch masked_row(model::llama_model& m, const std::vector<std::int64_t>& allowed,
                                float temperature, std::int64_t vocab) {
  model::forward_batch fb;
  model::forward_row row;
  row.tokens = {11, 12, 13, 14};
  row.block_table = test::iota_table(1);
  row.sample = true;
  row.logits = model::logits_mode::last;
  row.num_sample = static_cast<std::int32_t>(allowed.size());
  row.sampling.temperature = temperature;
  row.sampling.seed = 5;
  row.sampling.num_logprobs = 1;
  const std::int64_t words = gpu::mask_words_per_row(vocab);
  row.sampling.mask_begin = words;  // after a slice of someone else's
  fb.mask_words.assign(static_cast<std::size_t>(words * (1 + static_cast<std::int64_t>(allowed.size()))), 0);
  for (std::size_t j = 0; j < allowed.size(); ++j) {
    if (allowed[j] < 0) continue;
    fb.mask_words[static_cast<std::size_t>(words * (1 + static_cast<std::int64_t>(j)) + allowed[j] / 32)] |=
        1u << (allowed[j] % 32);
  }
  fb.rows.push_back(row);
  test::in_slots(m, fb, 16);
  return fb;
}

}  // namespace

TEST_CASE("llama model: each sampled position of a masked row uses its own mask", "[model]") {
  test::sim_model m("tiny-llama3");
  const std::int64_t vocab = m.model->config().vocab_size;
  for (const float temperature : {0.0f, 1.0f}) {
    model::kv_cache cache(*m.dev, m.model->config(), 4, 16);
    const model::forward_output out =
        m.model->forward(masked_row(*m.model, {1234, 77, -1}, temperature, vocab), cache);
    REQUIRE(out.rows.at(0).samples.size() == 3);
    CHECK(out.rows[0].samples[0].token == 1234);
    CHECK(out.rows[0].samples[1].token == 77);
    CHECK(out.rows[0].samples[2].token == gpu::no_allowed_token);
    REQUIRE(out.rows[0].samples[0].top_ids.size() == 1);
    CHECK(out.rows[0].samples[0].top_ids[0] != 1234);  // logprobs stay the raw model's
  }
}

TEST_CASE("llama model: a mask past the batch's words is refused before anything runs",
          "[model]") {
  test::sim_model m("tiny-llama3");
  const std::int64_t vocab = m.model->config().vocab_size;
  model::kv_cache cache(*m.dev, m.model->config(), 4, 16);
  model::forward_batch short_masks = masked_row(*m.model, {5, 6}, 0.0f, vocab);
  short_masks.mask_words.pop_back();
  CHECK_THROWS_WITH(m.model->forward(short_masks, cache), Catch::Contains("masks from word"));
}

}  // namespace courier_test_gpu_model_llama_mask
