// The CUDA backend through the whole model against Hugging Face transformers (f32 reference),
// with the bf16 tolerances of tests/data/FIXTURES.md: last-position logits within 0.25; greedy
// ids equal up to the first step whose f32 margin is below 0.25; and the same within tolerance
// whatever the chunking. Skipped without a GPU.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "gpu/cuda/cuda_check.hpp"
#include "gpu/cuda/cuda_device.hpp"
#include "gpu/model/generate_one.hpp"
#include "gpu/model/safetensors.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/reference_checks.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_cuda_model {

using namespace courier;

namespace {

struct cuda_model {
  std::unique_ptr<gpu::device> dev;
  std::unique_ptr<model::llama_model> model;
  explicit cuda_model(const std::string& name)
      : dev(gpu::cuda::make_cuda_device(0)),
        model(model::llama_model::load(test::model_dir(name), *dev)) {}
};

double worst_error(const float* got, const std::vector<float>& want) {
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double e = std::abs(static_cast<double>(got[i]) - want[i]);
    worst = std::isnan(e) ? 1e9 : std::max(worst, e);
  }
  return worst;
}

// Prefill in chunks of `chunk`, the logits of every position.
std::vector<float> chunked_logits(model::llama_model& m, const std::vector<model::token_id>& prompt,
                                  std::size_t chunk) {
  const auto blocks = static_cast<std::int32_t>((prompt.size() + 15) / 16);
  model::kv_cache cache(m.device(), m.config(), blocks, 16);
  std::vector<float> all;
  for (std::size_t at = 0; at < prompt.size(); at += chunk) {
    model::forward_batch fb;
    fb.return_logits = true;
    model::forward_row row;
    row.tokens.assign(
        prompt.begin() + static_cast<std::ptrdiff_t>(at),
        prompt.begin() + static_cast<std::ptrdiff_t>(std::min(prompt.size(), at + chunk)));
    row.start_pos = static_cast<std::int32_t>(at);
    row.block_table = test::iota_table(blocks);
    row.logits = model::logits_mode::all;
    fb.rows.push_back(row);
    test::in_slots(m, fb, 16);
    const auto out = m.forward(fb, cache);
    all.insert(all.end(), out.rows[0].logits.begin(), out.rows[0].logits.end());
  }
  return all;
}

void check_model(const std::string& name) {
  test::reference ref(name);
  REQUIRE(ref.num_prompts() > 0);
  if (!gpu::cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  cuda_model cm(name);
  const auto V = static_cast<std::size_t>(cm.model->config().vocab_size);
  for (int p = 0; p < ref.num_prompts(); ++p) {
    const std::string key = "p" + std::to_string(p);
    const auto prompt = ref.ids(key + ".ids");
    const auto want = ref.f32(key + ".f32.last_logits");
    for (std::size_t chunk : {prompt.size(), std::size_t{7}, std::size_t{1}}) {
      INFO(name << " prompt " << p << " in chunks of " << chunk);
      const auto logits = chunked_logits(*cm.model, prompt, chunk);
      REQUIRE(logits.size() == prompt.size() * V);
      CHECK(worst_error(logits.data() + (prompt.size() - 1) * V, want) <= 0.25);
    }
  }
  model::kv_cache cache(*cm.dev, cm.model->config(), 64, 16);
  for (int g = 0; g < ref.num_greedy(); ++g) {
    const std::string key = "g" + std::to_string(g);
    model::generate_request req;
    req.prompt = ref.ids("p" + std::to_string(ref.i32(key + ".prompt")[0]) + ".ids");
    req.max_tokens = 32;
    req.ignore_eos = true;
    const auto got = model::generate_one(*cm.model, cache, req).tokens;
    const auto want = ref.ids(key + ".f32.ids");
    const auto margins = ref.f32(key + ".f32.margins");
    int compared = 0;
    for (std::size_t i = 0; i < want.size() && margins[i] >= 0.25f; ++i) {
      INFO(name << " greedy run " << g << " step " << i);
      CHECK(got.at(i) == want[i]);
      ++compared;
    }
    INFO("steps compared: " << compared);
  }
}

}  // namespace

// The hidden state an embedding reads (return_hidden: the final norm's output in bf16, widened),
// projected through the folder's tied lm_head on the host: transformers' last logits within the
// bf16 bar.
TEST_CASE("cuda model: the last hidden state through lm_head gives transformers' logits", "[gpu]") {
  test::reference ref("tiny-qwen3");
  REQUIRE(ref.num_prompts() > 0);
  if (!gpu::cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  cuda_model cm("tiny-qwen3");
  const auto folder =
      model::safetensors_file::open(test::model_dir("tiny-qwen3") + "/model.safetensors");
  const gpu::host_tensor& head = folder.tensor("model.embed_tokens.weight");
  for (int p = 0; p < ref.num_prompts(); ++p) {
    const std::string key = "p" + std::to_string(p);
    const auto prompt = ref.ids(key + ".ids");
    INFO("prompt " << p);
    const std::vector<float> hidden = test::prefill_hidden(*cm.model, prompt).hidden;
    REQUIRE(hidden.size() == static_cast<std::size_t>(cm.model->config().hidden_size));
    CHECK(test::projected_logits_error(head, hidden, ref.f32(key + ".f32.last_logits"), false) <=
          0.25);
  }
}

TEST_CASE("cuda model: tiny-qwen3 matches transformers within bf16 tolerances", "[gpu]") {
  check_model("tiny-qwen3");
}
TEST_CASE("cuda model: tiny-llama3 matches transformers within bf16 tolerances", "[gpu]") {
  check_model("tiny-llama3");
}
TEST_CASE("cuda model: tiny-qwen2 matches transformers within bf16 tolerances", "[gpu]") {
  check_model("tiny-qwen2");
}

}  // namespace courier_test_gpu_cuda_model
