// Built-in shapes and the roofline's denominators, against the published parameter counts and
// against brute-force sums written here.
#include <catch2/catch.hpp>

#include "gpu/model/model_shapes.hpp"
#include "gpu/model/roofline.hpp"
#include "tests/support/fixtures.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_model_roofline {

using namespace courier;

TEST_CASE("model shapes: the built-in shapes have their models' published sizes", "[model]") {
  // Llama 3.1 8B: model.safetensors.index.json total_size 16060522496 bytes of bf16.
  const auto llama = model::builtin_shape("llama3-8b");
  REQUIRE(llama);
  CHECK(model::parameter_count(*llama) * 2 == 16060522496LL);
  CHECK(llama->rope.type == model::rope_config::kind::llama3);
  CHECK(llama->num_kv_heads == 8);
  // Qwen3 model cards: 8.2B (6.95B non-embedding) and 0.6B (0.44B non-embedding), tied for 0.6B.
  const auto q8 = model::builtin_shape("qwen3-8b");
  const auto q06 = model::builtin_shape("qwen3-0.6b");
  REQUIRE(q8);
  REQUIRE(q06);
  const auto embed = [](const model::model_config& c) {
    return static_cast<double>(c.vocab_size) * c.hidden_size * (c.tie_word_embeddings ? 1 : 2);
  };
  CHECK(model::parameter_count(*q8) / 1e9 == Approx(8.2).margin(0.05));
  CHECK((model::parameter_count(*q8) - embed(*q8)) / 1e9 == Approx(6.95).margin(0.005));
  CHECK(model::parameter_count(*q06) / 1e9 == Approx(0.6).margin(0.05));
  CHECK((model::parameter_count(*q06) - embed(*q06)) / 1e9 == Approx(0.44).margin(0.005));
  CHECK(q06->tie_word_embeddings);
  CHECK(q8->qk_norm);
  CHECK_FALSE(model::builtin_shape("llama3-70b"));
  CHECK(model::builtin_shape_names().size() == 3);
}

TEST_CASE("roofline: a fixture's parameters are the elements of the tensors it loads",
          "[model]") {
  for (const char* name : {"tiny-qwen3", "tiny-llama3", "tiny-qwen2"}) {
    const test::sim_model m(name);
    // The fixtures are stored in bf16: two bytes per parameter read from the files.
    CHECK(model::parameter_count(m.model->config()) * 2 ==
          static_cast<std::int64_t>(m.model->weight_bytes()));
  }
}

TEST_CASE("roofline: decode bytes and prefill FLOPs equal their sums token by token",
          "[model]") {
  const auto c = *model::builtin_shape("qwen3-8b");
  const double H = c.hidden_size, I = c.intermediate_size, D = c.head_dim;
  const double NQ = c.num_heads * D, NK = c.num_kv_heads * D, V = c.vocab_size;
  // Per token and layer: q, k, v, o projections and the three MLP matrices.
  const double linear_params = H * NQ + 2 * H * NK + NQ * H + 3 * H * I;
  const double params = static_cast<double>(model::parameter_count(c));

  // Decode: everything but the (untied) embedding table, plus K and V of every cached token.
  const double want_bytes = (params - V * H) * 2 + 8.0 * 1024 * c.num_layers * 2 * NK * 2;
  CHECK(model::decode_step_bytes(c, 2, 2, 8, 1024) == Approx(want_bytes).epsilon(1e-12));

  // Prefill of 3 sequences of 100 tokens, summed token by token.
  double flops = 0;
  for (int s = 0; s < 3; ++s) {
    for (int t = 0; t < 100; ++t) {
      flops += 2 * linear_params * c.num_layers;        // projections and MLP
      flops += c.num_layers * c.num_heads * 4.0 * D * (t + 1);  // q.k and p.v over t + 1 keys
    }
    flops += 2 * V * H;  // lm_head on the last token
  }
  CHECK(model::prefill_flops(c, 3, 100) == Approx(flops).epsilon(1e-12));
}

TEST_CASE("llama model: random weights depend only on the seed", "[model]") {
  const auto cfg = model::load_model_config(test::model_dir("tiny-llama3"));
  auto dev = gpu::make_sim_device(2, 512);
  auto logits = [&](std::uint64_t seed) {
    auto m = model::llama_model::random(cfg, *dev, seed);
    CHECK(m->weight_bytes() == static_cast<std::size_t>(model::parameter_count(cfg)) * 4);
    return test::prefill_all_logits(*m, {1, 2, 3, 4, 5});
  };
  const auto a = logits(7), b = logits(7), c = logits(8);
  REQUIRE(a.size() == 5u * cfg.vocab_size);
  CHECK(a == b);
  CHECK(a != c);
  for (float x : a) REQUIRE(std::isfinite(x));
}

}  // namespace courier_test_gpu_model_roofline
