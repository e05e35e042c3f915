// The sim backend against Hugging Face transformers (tests/data/reference, f32 mode) with the
// tolerances of tests/data/FIXTURES.md.
#include <catch2/catch.hpp>

#include "gpu/model/generate_one.hpp"
#include "tests/support/reference_checks.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_model_llama_reference {

using namespace courier;

namespace {

void check_prompts(const std::string& name) {
  test::sim_model sm(name);
  test::check_prompt_logits(
      name, static_cast<std::size_t>(sm.model->config().vocab_size),
      [&](const std::vector<model::token_id>& prompt) {
        return test::prefill_all_logits(*sm.model, prompt);
      });
}

void check_greedy(const std::string& name) {
  test::sim_model sm(name);
  model::kv_cache cache(*sm.dev, sm.model->config(), 64, 16);
  test::check_greedy_tokens(name, [&](const model::generate_request& req) {
    return model::generate_one(*sm.model, cache, req).tokens;
  });
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
