// The sim backend against Hugging Face transformers (tests/data/reference, f32 mode) with the
// tolerances of tests/data/FIXTURES.md.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gpu/dtype.hpp"
#include "gpu/model/generate_one.hpp"
#include "gpu/model/safetensors.hpp"
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

// Each prompt's last hidden state (after the final norm: what a sentence-transformers last-token
// pooling reads), asked for alone, projected through the model folder's lm_head (the tied
// embedding where there is none) on the host: transformers' last logits, within the logits'
// tolerance.
void check_hidden(const std::string& name, const std::string& head) {
  test::sim_model sm(name);
  const std::int64_t H = sm.model->config().hidden_size, V = sm.model->config().vocab_size;
  const auto folder = model::safetensors_file::open(test::model_dir(name) + "/model.safetensors");
  const auto& w = folder.tensor(head);
  REQUIRE(w.shape == std::vector<std::int64_t>{V, H});
  test::reference ref(name);
  for (int p = 0; p < ref.num_prompts(); ++p) {
    const std::string key = "p" + std::to_string(p);
    const auto prompt = ref.ids(key + ".ids");
    INFO(name << " prompt " << p << " (" << prompt.size() << " tokens)");
    const model::row_output out = test::prefill_hidden(*sm.model, prompt);
    REQUIRE(out.hidden.size() == static_cast<std::size_t>(H));
    CHECK(out.logits.empty());  // asked for the hidden state only
    CHECK(test::projected_logits_error(w, out.hidden, ref.f32(key + ".f32.last_logits")) <= 2e-3);
  }
}

}  // namespace

TEST_CASE("llama model: the last hidden state through lm_head gives transformers' logits",
          "[model][reference]") {
  check_hidden("tiny-qwen3", "model.embed_tokens.weight");  // tied
  check_hidden("tiny-llama3", "lm_head.weight");
}
TEST_CASE("hybrid model: the last hidden state through lm_head gives transformers' logits",
          "[model][reference]") {
  check_hidden("tiny-hybrid", "lm_head.weight");
}

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
