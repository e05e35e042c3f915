// Tensor parallelism on the sim: each bundled model over 2 and 4 ranks (where its attention heads
// allow),
// every rank a sim device holding its shard and running in a thread of its own, against
// transformers (tests/data/reference, the f32 rule of FIXTURES.md), against the same model on
// one device, and for what each rank holds.
#include <catch2/catch.hpp>

#include "gpu/model/generate_one.hpp"
#include "gpu/model/tensor_parallel.hpp"
#include "gpu/model/lora_adapter.hpp"
#include "tests/support/lora_fixture.hpp"
#include "tests/support/lora_reference.hpp"
#include "tests/support/reference_checks.hpp"
#include "tests/support/tp_ranks.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_model_tensor_parallel_forward {

using namespace courier;

namespace {

// Every rank's result of f(r), checked equal bit for bit (the all-reduce sums in rank order on
// every rank, and each samples the same gathered logits), and rank 0's returned.
template <class T, class F>
T on_every_rank(test::tp_ranks& ranks, F&& f) {
  std::vector<T> out(static_cast<std::size_t>(ranks.size()));
  ranks.each([&](int r) { out[static_cast<std::size_t>(r)] = f(r); });
  for (int r = 1; r < ranks.size(); ++r) {
    INFO("rank " << r);
    CHECK(out[static_cast<std::size_t>(r)] == out[0]);
  }
  return out[0];
}

void check_model(const std::string& name, int size) {
  INFO(name << " over " << size << " ranks");
  test::tp_ranks ranks(test::model_dir(name), size);
  const model::model_config& cfg = ranks.models[0]->config();
  test::check_prompt_logits(
      name, static_cast<std::size_t>(cfg.vocab_size),
      [&](const std::vector<model::token_id>& prompt) {
        return on_every_rank<std::vector<float>>(ranks, [&](int r) {
          return test::prefill_all_logits(*ranks.models[static_cast<std::size_t>(r)], prompt);
        });
      });

  // Greedy decoding: transformers' tokens, and the very tokens of the model on one device (the
  // sums are taken in another order, so the logits differ in their last bits, never enough to
  // turn a greedy step here).
  test::sim_model one(name);
  model::kv_cache one_cache(*one.dev, one.model->config(), 64, 16);
  std::vector<model::kv_cache> caches;
  for (int r = 0; r < size; ++r) {
    const auto& m = *ranks.models[static_cast<std::size_t>(r)];
    caches.emplace_back(m.device(), m.shard_config(), 64, 16);
  }
  test::check_greedy_tokens(name, [&](const model::generate_request& req) {
    const auto tokens = on_every_rank<std::vector<model::token_id>>(ranks, [&](int r) {
      return model::generate_one(*ranks.models[static_cast<std::size_t>(r)],
                                 caches[static_cast<std::size_t>(r)], req)
          .tokens;
    });
    CHECK(tokens == model::generate_one(*one.model, one_cache, req).tokens);
    return tokens;
  });
}

}  // namespace

TEST_CASE("tensor parallel: tiny-qwen2 over 2 and 4 ranks matches transformers and one device",
          "[model][reference]") {
  check_model("tiny-qwen2", 2);
  check_model("tiny-qwen2", 4);  // 2 KV heads: each on two ranks
}

TEST_CASE("tensor parallel: tiny-qwen3 over 2 and 4 ranks matches transformers and one device",
          "[model][reference]") {
  check_model("tiny-qwen3", 2);
  check_model("tiny-qwen3", 4);
}

TEST_CASE("tensor parallel: tiny-llama3 over 2 ranks matches transformers and one device",
          "[model][reference]") {
  check_model("tiny-llama3", 2);  // 2 heads, 1 KV head: on both ranks
}

TEST_CASE("tensor parallel: tiny-hybrid (NemotronH) over 2 and 4 ranks matches transformers and "
          "one device",
          "[model][reference]") {
  check_model("tiny-hybrid", 2);  // each rank: 4 of the 8 Mamba-2 heads, 1 of the 2 groups
  // Each rank: 2 heads and the group they read, which the next rank shares; the group's gated
  // norm sums its squares over both (gated_square_sums, all-reduce, gated_rms_norm_summed).
  check_model("tiny-hybrid", 4);
  {
    test::tp_ranks four(test::model_dir("tiny-hybrid"), 4);
    for (int r = 0; r < 4; ++r) {
      const model::tp_layout& l = four.models[static_cast<std::size_t>(r)]->tensor_parallel();
      CHECK(l.mamba_group_ranks == 2);
      CHECK(l.mamba_groups.begin == r / 2);
      CHECK(l.mamba_groups.count == 1);
    }
  }
  // Each rank keeps its heads' share of every sequence's conv and SSM states.
  test::sim_model one("tiny-hybrid");
  test::tp_ranks two(test::model_dir("tiny-hybrid"), 2);
  for (const auto& m : two.models) {
    CHECK(m->state_bytes_per_slot() * 2 == one.model->state_bytes_per_slot());
  }
}

TEST_CASE("tensor parallel: a model its heads do not let split is refused, naming why",
          "[model]") {
  CHECK_THROWS_WITH(test::tp_ranks(test::model_dir("tiny-llama3"), 4),
                    Catch::Contains("2 attention heads do not split evenly across 4 ranks"));
}

// Greedy tokens of `name` over `size` ranks with the adapter `fixture` makes, against the same
// adapter on one device (and, that it did something, the base model's).
void check_lora(const std::string& name, int size, const std::string& fixture) {
  INFO(name << " over " << size << " ranks, adapter " << fixture);
  const test::lora_fixture f(name, fixture);
  test::tp_ranks ranks(test::model_dir(name), size);
  const auto adapter = model::load_lora_adapter("x", f.adapter(), ranks.models[0]->config(), 16);
  std::vector<model::kv_cache> caches;
  for (auto& m : ranks.models) {
    m->reserve_loras(2, 16);
    caches.emplace_back(m->device(), m->shard_config(), 64, 16);
  }
  ranks.each([&](int r) { ranks.models[static_cast<std::size_t>(r)]->load_lora(1, *adapter); });
  const std::vector<model::token_id> prompt = {5, 17, 300, 41, 9, 1000, 77, 3, 250, 12};
  model::generate_request g;
  g.prompt = prompt;
  g.max_tokens = 12;
  g.ignore_eos = true;
  g.lora_slot = 1;
  const auto tokens = on_every_rank<std::vector<model::token_id>>(ranks, [&](int r) {
    return model::generate_one(*ranks.models[static_cast<std::size_t>(r)],
                               caches[static_cast<std::size_t>(r)], g)
        .tokens;
  });
  CHECK(test::mismatch(tokens, test::lora_reference(name, f.adapter(), prompt, 12)) == "");
  CHECK(tokens != test::lora_reference(name, "", prompt, 12).tokens);
}

TEST_CASE("tensor parallel: a LoRA adapter split with the model gives its tokens on one device",
          "[model][lora]") {
  const std::string every = "--seed 51 --rank 8 --alpha 16 --delta 0.6 --targets "
                            "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj";
  check_lora("tiny-qwen2", 2, every);
  check_lora("tiny-qwen2", 4, every);  // its KV heads' B rows on two ranks each
  check_lora("tiny-hybrid", 2,
             "--seed 52 --rank 8 --alpha 16 --delta 0.6 --targets "
             "q_proj,k_proj,v_proj,o_proj,up_proj,down_proj,in_proj,out_proj");
}

TEST_CASE("tensor parallel: each rank holds its share of the weights and of each KV block",
          "[model]") {
  const std::string dir = test::model_dir("tiny-qwen2");  // 2 KV heads, tied embeddings
  test::sim_model one("tiny-qwen2");
  const model::model_config& cfg = one.model->config();
  const std::size_t full = one.model->weight_bytes();
  // Only the norms are whole on every rank (bf16 in this checkpoint).
  REQUIRE(model::safetensors_file::open(dir + "/model.safetensors").tensor("model.norm.weight").type ==
          gpu::dtype::bf16);
  const auto norms = static_cast<std::size_t>((2 * cfg.num_layers + 1) * cfg.hidden_size * 2);
  test::tp_ranks two(dir, 2);
  for (const auto& m : two.models) CHECK(m->weight_bytes() == (full - norms) / 2 + norms);
  const std::size_t block = model::kv_cache::block_bytes(cfg, 16, gpu::dtype::f32);
  CHECK(model::kv_cache::block_bytes(two.models[1]->shard_config(), 16, gpu::dtype::f32) ==
        block / 2);
  // Over 4 ranks each of the 2 KV heads is on two: a rank's block is still half the model's.
  test::tp_ranks four(dir, 4);
  for (const auto& m : four.models) {
    CHECK(m->shard_config().num_heads == 1);
    CHECK(model::kv_cache::block_bytes(m->shard_config(), 16, gpu::dtype::f32) == block / 2);
    CHECK(m->weight_bytes() < full / 2);
  }
}

}  // namespace courier_test_gpu_model_tensor_parallel_forward
