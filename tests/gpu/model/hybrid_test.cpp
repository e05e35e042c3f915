// A hybrid model's (NemotronH) contract with its callers, beyond matching transformers
// (llama_reference_test) and batching (llama_batching_test): every row names its Mamba-2 state
// row, and a backend that does not run Mamba-2 refuses the model at load, by name.
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

model::forward_batch one_row(std::int32_t state_slot) {
  model::forward_batch fb;
  model::forward_row row;
  row.tokens = {5, 6, 7};
  row.block_table = test::iota_table(1);
  row.sample = true;
  row.state_slot = state_slot;
  fb.rows.push_back(row);
  return fb;
}

}  // namespace

TEST_CASE("hybrid model: every row needs a state slot, and a Llama row may not have one",
          "[model]") {
  test::sim_model hybrid("tiny-hybrid");
  model::kv_cache cache(*hybrid.dev, hybrid.model->config(), 4, 16);
  CHECK_THROWS_AS(hybrid.model->forward(one_row(-1), cache), std::invalid_argument);
  CHECK(hybrid.model->forward(one_row(3), cache).rows.at(0).samples.size() == 1);
  test::sim_model llama("tiny-llama3");
  model::kv_cache llama_cache(*llama.dev, llama.model->config(), 4, 16);
  CHECK_THROWS_AS(llama.model->forward(one_row(0), llama_cache), std::invalid_argument);
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

}  // namespace courier_test_gpu_model_hybrid
