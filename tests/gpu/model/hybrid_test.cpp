// A hybrid model's (NemotronH) contract with its callers, beyond matching transformers
// (llama_reference_test) and batching (llama_batching_test): every row names its Mamba-2 state
// row, a state snapshot restored into another sequence continues it exactly, and a backend that
// does not run Mamba-2 refuses the model at load, by name.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "gpu/forwarding_device.hpp"
#include "tests/support/fixtures.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_model_hybrid {

using namespace courier;

namespace {

// The sim, saying it does not run Mamba-2 (as the CUDA backend does today).
class no_mamba_device final : public gpu::forwarding_device {
 public:
  using forwarding_device::forwarding_device;
  bool runs_mamba() const override { return false; }
};

model::forward_batch one_row(model::llama_model& m, std::int32_t state_slot) {
  model::forward_batch fb;
  model::forward_row row;
  row.tokens = {5, 6, 7};
  row.block_table = test::iota_table(1);
  row.sample = true;
  row.state_slot = state_slot;
  fb.rows.push_back(row);
  test::in_slots(m, fb, 16);
  return fb;
}

}  // namespace

TEST_CASE("hybrid model: every row needs a state slot, and a Llama row may not have one",
          "[model]") {
  test::sim_model hybrid("tiny-hybrid");
  model::kv_cache cache(*hybrid.dev, hybrid.model->config(), 4, 16);
  CHECK_THROWS_AS(hybrid.model->forward(one_row(*hybrid.model, -1), cache), std::invalid_argument);
  CHECK(hybrid.model->forward(one_row(*hybrid.model, 3), cache).rows.at(0).samples.size() == 1);
  test::sim_model llama("tiny-llama3");
  model::kv_cache llama_cache(*llama.dev, llama.model->config(), 4, 16);
  CHECK_THROWS_AS(llama.model->forward(one_row(*llama.model, 0), llama_cache), std::invalid_argument);
  // Nor a state copy: a Llama model has no states to copy.
  model::forward_batch copies = one_row(*llama.model, -1);
  copies.state_copies.push_back({true, 0, 0});
  CHECK_THROWS_WITH(llama.model->forward(copies, llama_cache),
                    Catch::Contains("state copies for a model without state"));
  CHECK(llama.model->forward(one_row(*llama.model, -1), llama_cache).rows.at(0).samples.size() == 1);
}

TEST_CASE("hybrid model: once its state rows are reserved, a row past them is an error, not a "
          "reallocation that would lose every state",
          "[model]") {
  test::sim_model hybrid("tiny-hybrid");
  model::kv_cache cache(*hybrid.dev, hybrid.model->config(), 4, 16);
  CHECK(hybrid.model->reserve_states(3) == 3 * hybrid.model->state_bytes_per_slot());
  CHECK(hybrid.model->forward(one_row(*hybrid.model, 2), cache).rows.at(0).samples.size() == 1);
  CHECK_THROWS_WITH(hybrid.model->forward(one_row(*hybrid.model, 3), cache), Catch::Contains("past the 3 reserved"));
  model::forward_batch snap = one_row(*hybrid.model, 0);
  snap.rows[0].state_snapshot = 5;
  CHECK_THROWS_AS(hybrid.model->forward(snap, cache), std::invalid_argument);
  CHECK(hybrid.model->state_slots() == 3);
}

TEST_CASE("hybrid model: the KV cache has the attention layers only", "[model]") {
  test::sim_model hybrid("tiny-hybrid");
  const model::model_config& c = hybrid.model->config();
  CHECK(c.kv_layers() == 1);  // of 4: mamba, attention, mamba, mlp
  CHECK(c.mamba_layers() == 2);
  CHECK(model::kv_cache::block_bytes(c, 16, gpu::dtype::f32) ==
        2u * 16 * static_cast<std::size_t>(c.num_kv_heads * c.head_dim) * 4);
}

TEST_CASE("hybrid model: a backend without Mamba-2 refuses it at load, naming it", "[model]") {
  no_mamba_device dev(gpu::make_sim_device(1, 256));
  const std::string dir = test::model_dir("tiny-hybrid");
  try {
    model::llama_model::load(dir, dev);
    FAIL("expected a model_error");
  } catch (const model::model_error& e) {
    const std::string what = e.what();
    CHECK(what.find(dir + "/config.json") == 0);
    CHECK(what.find("NemotronHForCausalLM is a hybrid model with Mamba-2 layers, which the ") !=
          std::string::npos);
    CHECK(what.find("backend does not run yet (the sim backend does)") != std::string::npos);
  }
}

TEST_CASE("hybrid model: a state snapshot restored into another sequence continues it bit for "
          "bit", "[model]") {
  test::sim_model m("tiny-hybrid");
  const auto V = static_cast<std::size_t>(m.model->config().vocab_size);
  model::kv_cache cache(*m.dev, m.model->config(), 8, 16);
  std::vector<model::token_id> prompt;
  for (std::uint32_t i = 0; i < 40; ++i) prompt.push_back((i * 97 + 13) % 2048);
  auto row_of = [&](std::size_t begin, std::size_t end, std::vector<std::int32_t> table,
                    std::int32_t slot) {
    model::forward_row row;
    row.tokens.assign(prompt.begin() + static_cast<std::ptrdiff_t>(begin),
                      prompt.begin() + static_cast<std::ptrdiff_t>(end));
    row.start_pos = static_cast<std::int32_t>(begin);
    row.block_table = std::move(table);
    row.logits = model::logits_mode::all;
    row.state_slot = slot;
    return row;
  };
  auto run = [&](model::forward_row row) {
    model::forward_batch fb;
    fb.return_logits = true;
    fb.rows.push_back(std::move(row));
    test::in_slots(*m.model, fb, 16);
    return m.model->forward(fb, cache).rows.at(0).logits;
  };
  // Sequence A in state row 0: 32 tokens (blocks 0 and 1), snapshot into row 5, then 8 more.
  model::forward_row first = row_of(0, 32, {0, 1, 2}, 0);
  first.state_snapshot = 5;
  run(first);
  const std::vector<float> a = run(row_of(32, 40, {0, 1, 2}, 0));
  REQUIRE(a.size() == 8 * V);
  // Sequence B in state row 1 shares A's first 32 positions' blocks and restores the snapshot:
  // it computes only the last 8 tokens, into a block of its own, and gives A's logits exactly.
  model::forward_row resumed = row_of(32, 40, {0, 1, 3}, 1);
  resumed.state_restore = 5;
  CHECK(run(resumed) == a);
  // Without the snapshot (state row 2 holds no state of this prompt) the logits differ.
  CHECK(run(row_of(32, 40, {0, 1, 4}, 2)) != a);
  // The snapshot is still there for another restore.
  model::forward_row again = row_of(32, 40, {0, 1, 3}, 3);
  again.state_restore = 5;
  CHECK(run(again) == a);

  // Refused: a restore at position 0, a target the step also uses, two rows into one target.
  model::forward_row at_zero = row_of(0, 8, {6}, 1);
  at_zero.state_restore = 5;
  CHECK_THROWS_AS(run(at_zero), std::invalid_argument);
  model::forward_row onto_live = row_of(0, 8, {6}, 1);
  onto_live.state_snapshot = 1;
  CHECK_THROWS_AS(run(onto_live), std::invalid_argument);
  model::forward_batch two;
  two.rows = {row_of(0, 8, {6}, 1), row_of(0, 8, {7}, 2)};
  two.rows[0].state_snapshot = two.rows[1].state_snapshot = 6;
  test::in_slots(*m.model, two, 16);
  CHECK_THROWS_AS(m.model->forward(two, cache), std::invalid_argument);
}

}  // namespace courier_test_gpu_model_hybrid
