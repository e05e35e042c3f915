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
#include "tests/support/lora_reference.hpp"
#include "tests/support/prometheus_text.hpp"
#include "tests/support/reference_match.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_lora {

using namespace courier;
using nlohmann::json;

namespace {

test::reference_output alone(const std::string& name, const std::string& adapter,
                             const std::vector<msg::token_id>& prompt, int max_tokens) {
  return test::lora_reference(name, adapter, prompt, max_tokens);
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
  // /metrics: requests and tokens per adapter (a: 2 + 3 requests, b: 3), the slot pool.
  caf::scoped_actor self{h.rt().system()};
  std::string text;
  self->request(h.rt().telemetry(), caf::infinite, msg::scrape_atom_v)
      .receive([&](std::string& t) { text = std::move(t); }, [](caf::error&) {});
  const auto m = test::parse_prometheus(text);
  CHECK(test::prom_value(m, "courier:lora_requests_total", {{"adapter", "a"}}) == 5);
  CHECK(test::prom_value(m, "courier:lora_requests_total", {{"adapter", "b"}}) == 3);
  CHECK(test::prom_value(m, "courier:lora_generation_tokens_total", {{"adapter", "a"}}) == 5 * n);
  CHECK(test::prom_value(m, "courier:lora_prompt_tokens_total", {{"adapter", "b"}}) == 3 * 40);
  CHECK(test::prom_value(m, "courier:lora_slots") == 1);
  CHECK(test::prom_value(m, "courier:lora_slots_in_use") == 0);
  CHECK(test::prom_value(m, "courier:lora_loads_total") == static_cast<double>(st.lora_loads));
}

TEST_CASE(
    "lora: with one host copy for three adapters in two slots, each request gets its own "
    "adapter's tokens; the others are read again from their folders",
    "[integration][lora]") {
  const test::lora_fixture a("tiny-llama3", "--seed 31 --rank 4 --alpha 8 --targets q_proj,o_proj");
  const test::lora_fixture b("tiny-llama3",
                             "--seed 32 --rank 8 --alpha 8 --targets v_proj,up_proj");
  const test::lora_fixture c("tiny-llama3", "--seed 33 --rank 4 --alpha 4 --targets down_proj");
  auto cfg = test::sim_config("tiny-llama3");
  cfg.lora.adapters = {{"a", a.adapter()}, {"b", b.adapter()}, {"c", c.adapter()}};
  cfg.lora.max_loras = 2;
  cfg.lora.max_cpu_loras = 1;
  test::harness h(cfg);
  REQUIRE(h.rt().ready().lora_slots == 2);
  REQUIRE(h.rt().ready().lora_host_adapters == std::vector<std::string>{"a"});
  const std::vector<std::string> names = {"a", "b", "c", ""};
  const std::vector<std::string> dirs = {a.adapter(), b.adapter(), c.adapter(), ""};
  const int n = 8;
  const auto prompt_of = [](msg::request_id id) {
    std::vector<msg::token_id> p;
    for (int i = 0; i < 24; ++i) p.push_back(static_cast<msg::token_id>((i * 53 + id) % 2000));
    return p;
  };
  for (msg::request_id id = 1; id <= 8; ++id) {
    h.submit(greedy(id, prompt_of(id), names[id % 4], n));
  }
  auto& out = h.wait_all();
  for (msg::request_id id = 1; id <= 8; ++id) {
    INFO("request " << id << ", adapter '" << names[id % 4] << "'");
    CHECK(test::mismatch(out.at(id).tokens, alone("tiny-llama3", dirs[id % 4], prompt_of(id), n)) ==
          "");
  }
  const msg::scheduler_stats st = h.stats();
  CHECK(st.lora_host_stages >= 2);  // b and c had no copy at start
  CHECK(st.lora_host_evictions >= 2);
  CHECK(st.lora_slots_in_use == 0);
  caf::scoped_actor self{h.rt().system()};
  std::string text;
  self->request(h.rt().telemetry(), caf::infinite, msg::scrape_atom_v)
      .receive([&](std::string& t) { text = std::move(t); }, [](caf::error&) {});
  const auto m = test::parse_prometheus(text);
  CHECK(test::prom_value(m, "courier:lora_host_reads_total") ==
        static_cast<double>(st.lora_host_stages));
  CHECK(test::prom_value(m, "courier:lora_passed_total") == static_cast<double>(st.lora_passed));
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

TEST_CASE("lora: an API key restricted to some models sees and uses only those",
          "[integration][lora][http]") {
  const test::lora_fixture a("tiny-llama3", "--seed 25 --rank 4 --alpha 8 --targets v_proj");
  auto cfg = test::sim_config("tiny-llama3");
  cfg.lora.adapters = {{"sql", a.adapter()}};
  cfg.server.api_keys = {{"k1", "team-a"}, {"k2", "team-b"}};
  cfg.server.tenant_models = {{"team-a", {"sql"}}};  // k1: {tenant: team-a, models: [sql]}
  test::server_fixture s(cfg);
  const std::string k1 = "-H 'Authorization: Bearer k1'", k2 = "-H 'Authorization: Bearer k2'";
  const json listed = test::curl(s.url("/v1/models"), "", k1).j()["data"];
  REQUIRE(listed.size() == 1);
  CHECK(listed[0]["id"] == "sql");
  CHECK(test::curl(s.url("/v1/models"), "", k2).j()["data"].size() == 2);
  CHECK(test::curl(s.url("/v1/models/tiny-llama3"), "", k1).status == 404);
  auto body = [](const std::string& model) {
    return json({{"model", model}, {"prompt", {1, 2, 3}}, {"max_tokens", 2}}).dump();
  };
  const auto refused = test::curl(s.url("/v1/completions"), body("tiny-llama3"), k1);
  CHECK(refused.status == 404);
  CHECK(refused.j()["error"]["code"] == "model_not_found");
  CHECK(refused.j()["error"]["type"] == "invalid_request_error");  // as /v1/models/{id} says
  CHECK(test::curl(s.url("/v1/completions"), body("sql"), k1).status == 200);
  CHECK(test::curl(s.url("/v1/completions"), body("tiny-llama3"), k2).status == 200);
  CHECK(test::curl(s.url("/v1/completions"), body("sql"), k2).status == 200);
}

TEST_CASE(
    "lora: an admin key loads an adapter at run time, requests use it, unloading it "
    "refuses new ones",
    "[integration][lora][http]") {
  const test::lora_fixture a("tiny-llama3",
                             "--seed 26 --rank 8 --alpha 16 --targets "
                             "q_proj,v_proj,down_proj");
  const test::lora_fixture other("tiny-qwen2", "--seed 27 --rank 8 --alpha 8 --targets q_proj");
  auto cfg = test::sim_config("tiny-llama3");
  cfg.lora.runtime_loading = true;
  cfg.lora.max_loras = 2;
  cfg.server.api_keys = {{"root", "ops"}, {"k1", "team-a"}};
  cfg.server.admin_tenants = {"ops"};  // root: {tenant: ops, admin: true}
  test::server_fixture s(cfg);
  const std::string root = "-H 'Authorization: Bearer root'", k1 = "-H 'Authorization: Bearer k1'";
  auto load = [&](const std::string& name, const std::string& dir, const std::string& key) {
    return test::curl(s.url("/v1/load_lora_adapter"),
                      json({{"lora_name", name}, {"lora_path", dir}}).dump(), key);
  };
  const std::vector<msg::token_id> prompt = {5, 17, 300, 41, 9, 1000, 77};
  auto complete = [&](const std::string& model) {
    return test::curl(s.url("/v1/completions"),
                      json({{"model", model},
                            {"prompt", prompt},
                            {"max_tokens", 8},
                            {"temperature", 0},
                            {"ignore_eos", true},
                            {"return_token_ids", true}})
                          .dump(),
                      k1);
  };
  CHECK(complete("fresh").status == 404);
  CHECK(load("fresh", a.adapter(), k1).status == 403);  // not an admin key
  // Another model's adapter: 400 naming the file and the shapes; nothing is listed.
  const auto bad = load("fresh", other.adapter(), root);
  CHECK(bad.status == 400);
  CHECK_THAT(bad.j()["error"]["message"].get<std::string>(),
             Catch::Matchers::Contains("adapter_model.safetensors"));
  CHECK(test::curl(s.url("/v1/models"), "", root).j()["data"].size() == 1);

  REQUIRE(load("fresh", a.adapter(), root).status == 200);
  CHECK(load("fresh", a.adapter(), root).status == 409);  // taken
  CHECK(test::curl(s.url("/v1/models"), "", k1).j()["data"].size() == 2);
  const auto r = complete("fresh");
  REQUIRE(r.status == 200);
  const auto ids = r.j()["choices"][0]["token_ids"].get<std::vector<msg::token_id>>();
  CHECK(test::mismatch(ids, alone("tiny-llama3", a.adapter(), prompt, 8)) == "");
  CHECK(ids != alone("tiny-llama3", "", prompt, 8).tokens);

  const auto unload =
      test::curl(s.url("/v1/unload_lora_adapter"), json({{"lora_name", "fresh"}}).dump(), root);
  CHECK(unload.status == 200);
  CHECK(complete("fresh").status == 404);
  CHECK(test::curl(s.url("/v1/unload_lora_adapter"), json({{"lora_name", "fresh"}}).dump(), root)
            .status == 404);
  // Loaded again under the same name once the engine has forgotten it.
  int status = 0;
  for (int i = 0; i < 100 && status != 200; ++i) status = load("fresh", a.adapter(), root).status;
  CHECK(status == 200);
  CHECK(complete("fresh").j()["choices"][0]["token_ids"].get<std::vector<msg::token_id>>() == ids);
}

TEST_CASE(
    "lora: another adapter loaded under a name already used never finds the first one's "
    "cached prefix; the same adapter under another name does",
    "[integration][lora][http]") {
  const test::lora_fixture a("tiny-llama3", "--seed 30 --rank 8 --alpha 16 --targets q_proj,v_proj");
  const test::lora_fixture b("tiny-llama3", "--seed 31 --rank 8 --alpha 16 --targets q_proj,v_proj");
  auto cfg = test::sim_config("tiny-llama3");
  cfg.lora.runtime_loading = true;
  cfg.lora.max_loras = 2;
  test::server_fixture s(cfg);
  auto load = [&](const std::string& name, const std::string& dir) {
    int status = 0;  // an unloaded name is free again once the engine has forgotten it
    for (int i = 0; i < 100 && status != 200; ++i) {
      status = test::curl(s.url("/v1/load_lora_adapter"),
                          json({{"lora_name", name}, {"lora_path", dir}}).dump())
                   .status;
    }
    return status;
  };
  auto unload = [&](const std::string& name) {
    return test::curl(s.url("/v1/unload_lora_adapter"), json({{"lora_name", name}}).dump()).status;
  };
  std::vector<msg::token_id> prompt;  // 5 blocks of 16: 80 tokens a cache could hold
  for (int i = 0; i < 81; ++i) prompt.push_back(static_cast<msg::token_id>(100 + 7 * i));
  struct answer {
    std::vector<msg::token_id> ids;
    std::int64_t cached = -1;
  };
  auto complete = [&](const std::string& model) {
    const auto r = test::curl(s.url("/v1/completions"),
                              json({{"model", model},
                                    {"prompt", prompt},
                                    {"max_tokens", 6},
                                    {"temperature", 0},
                                    {"ignore_eos", true},
                                    {"return_token_ids", true}})
                                  .dump());
    REQUIRE(r.status == 200);
    return answer{r.j()["choices"][0]["token_ids"].get<std::vector<msg::token_id>>(),
                  r.j()["usage"]["prompt_tokens_details"]["cached_tokens"].get<std::int64_t>()};
  };
  const auto ref_a = alone("tiny-llama3", a.adapter(), prompt, 6);
  const auto ref_b = alone("tiny-llama3", b.adapter(), prompt, 6);
  REQUIRE(ref_a.tokens != ref_b.tokens);

  REQUIRE(load("x", a.adapter()) == 200);
  const answer first = complete("x");
  CHECK(first.cached == 0);
  CHECK(test::mismatch(first.ids, ref_a) == "");
  CHECK(complete("x").cached == 80);  // the cache works for x = a
  REQUIRE(unload("x") == 200);

  REQUIRE(load("x", b.adapter()) == 200);  // before: 80 cached tokens, a's KV under b
  const answer other = complete("x");
  CHECK(other.cached == 0);
  CHECK(test::mismatch(other.ids, ref_b) == "");
  REQUIRE(unload("x") == 200);

  REQUIRE(load("y", a.adapter()) == 200);  // a's weights under another name: a's entries
  const answer same = complete("y");
  CHECK(same.cached == 80);
  CHECK(test::mismatch(same.ids, ref_a) == "");
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
