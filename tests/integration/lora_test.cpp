// LoRA adapters through the whole server: requests naming an adapter as their model get what
// the model gives alone with that adapter (bit for bit on sim), whatever else runs beside them
// and with fewer device slots than adapters; a prefix cached for one adapter (or the base) is
// never reused by another; /v1/models lists the adapters with their base as parent.
#include <catch2/catch.hpp>

#include <future>
#include <nlohmann/json.hpp>

#include "gpu/model/generate_one.hpp"
#include "gpu/model/lora_adapter.hpp"
#include "tests/support/http_fixture.hpp"
#include "tests/support/lora_fixture.hpp"
#include "tests/support/reference_match.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_lora {

using namespace courier;
using nlohmann::json;

namespace {

// The prompt's greedy continuation on a sim model of `name`, alone, with `adapter` (a PEFT
// folder; empty: the base model).
test::reference_output alone(const std::string& name, const std::string& adapter,
                             const std::vector<msg::token_id>& prompt, int max_tokens) {
  test::sim_model sm(name);
  if (!adapter.empty()) {
    sm.model->reserve_loras(1, 16);
    sm.model->load_lora(0, *model::load_lora_adapter("x", adapter, sm.model->config(), 16));
  }
  model::kv_cache cache(*sm.dev, sm.model->config(), 64, 16);
  model::generate_request g;
  g.prompt.assign(prompt.begin(), prompt.end());
  g.max_tokens = max_tokens;
  g.ignore_eos = true;
  g.lora_slot = adapter.empty() ? -1 : 0;
  return test::reference_alone(*sm.model, cache, g);
}

msg::submit greedy(msg::request_id id, const std::vector<msg::token_id>& prompt,
                   const std::string& adapter, int max_tokens) {
  msg::submit s;
  s.id = id;
  s.prompt = prompt;
  s.adapter = adapter;
  s.max_tokens = max_tokens;
  s.ignore_eos = true;
  s.sampling.temperature = 0.0f;
  return s;
}

}  // namespace

TEST_CASE(
    "lora: requests for two adapters and the base, one device slot, each get their own "
    "model's tokens; no prefix crosses adapters",
    "[integration][lora]") {
  const test::lora_fixture a("tiny-llama3",
                             "--seed 21 --rank 8 --alpha 16 --targets "
                             "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj");
  const test::lora_fixture b("tiny-llama3", "--seed 22 --rank 4 --alpha 8 --targets q_proj,v_proj");
  auto cfg = test::sim_config("tiny-llama3");
  cfg.lora.adapters = {{"a", a.adapter()}, {"b", b.adapter()}};
  cfg.lora.max_loras = 1;
  std::vector<msg::token_id> prompt;
  for (int i = 0; i < 40; ++i) prompt.push_back(static_cast<msg::token_id>((i * 37 + 11) % 2000));
  const int n = 12;
  const auto want_base = alone("tiny-llama3", "", prompt, n);
  const auto want_a = alone("tiny-llama3", a.adapter(), prompt, n);
  const auto want_b = alone("tiny-llama3", b.adapter(), prompt, n);
  REQUIRE(want_a.tokens != want_base.tokens);
  REQUIRE(want_b.tokens != want_a.tokens);

  test::harness h(cfg);
  REQUIRE(h.rt().ready().lora_slots == 1);
  // One after another: the base caches the prompt's blocks; a must not reuse them, and a again
  // reuses its own.
  h.submit(greedy(1, prompt, "", n));
  h.wait_all();
  h.submit(greedy(2, prompt, "a", n));
  h.wait_all();
  h.submit(greedy(3, prompt, "a", n));
  auto& out = h.wait_all();
  CHECK(test::mismatch(out.at(1).tokens, want_base) == "");
  CHECK(test::mismatch(out.at(2).tokens, want_a) == "");
  CHECK(test::mismatch(out.at(3).tokens, want_a) == "");
  CHECK(out.at(2).last.use.cached_tokens == 0);
  CHECK(out.at(3).last.use.cached_tokens >= 32);
  // All at once, with one slot: a and b take turns, the base runs beside either.
  for (msg::request_id id = 10; id < 19; ++id) {
    const std::string adapter = id % 3 == 0 ? "" : id % 3 == 1 ? "a" : "b";
    std::vector<msg::token_id> p = prompt;
    p[0] = static_cast<msg::token_id>(id);  // no shared prefix: each computes its own
    h.submit(greedy(id, p, adapter, n));
  }
  auto& all = h.wait_all();
  for (msg::request_id id = 10; id < 19; ++id) {
    std::vector<msg::token_id> p = prompt;
    p[0] = static_cast<msg::token_id>(id);
    const std::string dir = id % 3 == 0 ? "" : id % 3 == 1 ? a.adapter() : b.adapter();
    INFO("request " << id);
    CHECK(test::mismatch(all.at(id).tokens, alone("tiny-llama3", dir, p, n)) == "");
  }
  const msg::scheduler_stats st = h.stats();
  CHECK(st.lora_slots_in_use == 0);
  CHECK(st.lora_loads >= 3);  // a, then b, then a or b again at least
}

TEST_CASE("lora: /v1/models lists the adapters with their base; an unknown model is 404",
          "[integration][lora][http]") {
  const test::lora_fixture a("tiny-llama3", "--seed 23 --rank 4 --alpha 8 --targets o_proj");
  auto cfg = test::sim_config("tiny-llama3");
  cfg.lora.adapters = {{"support-bot", a.adapter()}};
  test::server_fixture s(cfg);
  const auto models = test::curl(s.url("/v1/models"));
  REQUIRE(models.status == 200);
  const json data = models.j()["data"];
  REQUIRE(data.size() == 2);
  CHECK(data[0]["id"] == "tiny-llama3");
  CHECK(data[0]["parent"].is_null());
  CHECK(data[1]["id"] == "support-bot");
  CHECK(data[1]["parent"] == "tiny-llama3");
  CHECK(test::curl(s.url("/v1/models/support-bot")).status == 200);
  const json body = {{"model", "support-bot"}, {"prompt", {1, 2, 3}}, {"max_tokens", 3}};
  const auto ok = test::curl(s.url("/v1/completions"), body.dump());
  CHECK(ok.status == 200);
  CHECK(ok.j()["model"] == "support-bot");
  const json other = {{"model", "no-such-adapter"}, {"prompt", {1, 2, 3}}, {"max_tokens", 3}};
  const auto missing = test::curl(s.url("/v1/completions"), other.dump());
  CHECK(missing.status == 404);
  CHECK(missing.j()["error"]["code"] == "model_not_found");
}

TEST_CASE("lora: a bad adapter stops the server at start, naming the file and the problem",
          "[integration][lora]") {
  const test::lora_fixture a("tiny-qwen2", "--seed 24 --rank 8 --alpha 8 --targets q_proj");
  auto cfg = test::sim_config("tiny-llama3");  // another model's adapter
  cfg.lora.adapters = {{"x", a.adapter()}};
  try {
    actors::runtime rt(cfg);
    FAIL("the runtime started");
  } catch (const std::exception& e) {
    CHECK_THAT(e.what(), Catch::Matchers::Contains("adapter_model.safetensors") &&
                             Catch::Matchers::Contains("expected [8, 256]"));
  }
}

}  // namespace courier_test_integration_lora
