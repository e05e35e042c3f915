// The sim backend against Hugging Face transformers (tests/data/reference, f32 mode) with the
// tolerances of tests/data/FIXTURES.md.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "gpu/model/generate_one.hpp"
#include "tests/support/fixtures.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_model_llama_reference {

using namespace courier;

namespace {

void check_prompts(const std::string& name) {
  test::sim_model sm(name);
  test::reference ref(name);
  const auto V = static_cast<std::size_t>(sm.model->config().vocab_size);
  REQUIRE(ref.num_prompts() > 0);
  for (int p = 0; p < ref.num_prompts(); ++p) {
    const std::string key = "p" + std::to_string(p);
    const auto prompt = ref.ids(key + ".ids");
    const auto logits = test::prefill_all_logits(*sm.model, prompt);
    REQUIRE(logits.size() == prompt.size() * V);
    INFO(name << " prompt " << p << " (" << prompt.size() << " tokens)");

    // Every last-position logit within 2e-3, absolute or relative to |logit| where larger.
    const auto want = ref.f32(key + ".f32.last_logits");
    REQUIRE(want.size() == V);
    const float* last = logits.data() + (prompt.size() - 1) * V;
    double worst = 0;
    for (std::size_t i = 0; i < V; ++i) {
      const double err = std::abs(static_cast<double>(last[i]) - want[i]) /
                         std::max(1.0, std::abs(static_cast<double>(want[i])));
      worst = std::max(worst, err);
    }
    CHECK(worst <= 2e-3);

    // Top-1 at every position, wherever the reference's top-1/top-2 gap exceeds 1e-3.
    const auto top_ids = ref.i32(key + ".f32.top5_ids");
    const auto top_logits = ref.f32(key + ".f32.top5_logits");
    int compared = 0;
    for (std::size_t pos = 0; pos < prompt.size(); ++pos) {
      if (top_logits[pos * 5] - top_logits[pos * 5 + 1] <= 1e-3f) continue;
      INFO("position " << pos);
      CHECK(test::argmax(logits.data() + pos * V, V) == static_cast<std::size_t>(top_ids[pos * 5]));
      ++compared;
    }
    CHECK(compared > 0);
  }
}

void check_greedy(const std::string& name) {
  test::sim_model sm(name);
  test::reference ref(name);
  REQUIRE(ref.num_greedy() > 0);
  model::kv_cache cache(*sm.dev, sm.model->config(), 64, 16);
  for (int g = 0; g < ref.num_greedy(); ++g) {
    const std::string key = "g" + std::to_string(g);
    const int p = ref.i32(key + ".prompt")[0];
    model::generate_request req;
    req.prompt = ref.ids("p" + std::to_string(p) + ".ids");
    req.max_tokens = 32;
    req.ignore_eos = true;
    const auto got = model::generate_one(*sm.model, cache, req).tokens;
    const auto want = ref.ids(key + ".f32.ids");
    const auto margins = ref.f32(key + ".f32.margins");
    REQUIRE(got.size() == 32);
    int compared = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (margins[i] < 1e-3f) break;  // a near-tie: the reference itself is not decisive
      INFO(name << " greedy run " << g << " step " << i);
      REQUIRE(got[i] == want[i]);
      ++compared;
    }
    CHECK(compared > 0);
  }
}

}  // namespace

TEST_CASE("llama model: tiny-qwen3 prompt logits match transformers", "[model][reference]") {
  check_prompts("tiny-qwen3");
}
TEST_CASE("llama model: tiny-llama3 prompt logits match transformers", "[model][reference]") {
  check_prompts("tiny-llama3");
}
TEST_CASE("llama model: tiny-qwen2 prompt logits match transformers", "[model][reference]") {
  check_prompts("tiny-qwen2");
}
TEST_CASE("llama model: tiny-qwen3 greedy decoding matches transformers", "[model][reference]") {
  check_greedy("tiny-qwen3");
}
TEST_CASE("llama model: tiny-llama3 greedy decoding matches transformers", "[model][reference]") {
  check_greedy("tiny-llama3");
}
TEST_CASE("llama model: tiny-qwen2 greedy decoding matches transformers", "[model][reference]") {
  check_greedy("tiny-qwen2");
}

TEST_CASE("hybrid model: tiny-hybrid (NemotronH) prompt logits match transformers",
          "[model][reference]") {
  check_prompts("tiny-hybrid");
}
TEST_CASE("hybrid model: tiny-hybrid (NemotronH) greedy decoding matches transformers",
          "[model][reference]") {
  check_greedy("tiny-hybrid");
}

}  // namespace courier_test_gpu_model_llama_reference
