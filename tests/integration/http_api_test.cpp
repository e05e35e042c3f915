// The HTTP API end to end at the curl level: bad input gets the right 4xx and queues nothing,
// auth, overload, and a client that goes away gives its KV blocks back.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "actors/admission/admission_server.hpp"
#include "gpu/model/generate_one.hpp"
#include "tests/actors/admission/http/raw_client.hpp"
#include "tests/actors/admission/http/test_server.hpp"
#include "tests/support/reference_match.hpp"
#include "tests/support/http_fixture.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_http_api {

using namespace courier;
using nlohmann::json;
using test::curl;
using test::server_fixture;

namespace {

// A completion body whose prompt has n tokens (all id 1).
std::string long_prompt_body(int n) {
  json j = {{"model", "tiny-llama3"}, {"prompt", std::vector<int>(static_cast<std::size_t>(n), 1)}};
  return j.dump();
}

config::server_config llama_config() {
  auto c = test::sim_config("tiny-llama3");
  c.model.max_model_len = 512;
  c.server.max_body_bytes = 4096;
  return c;
}

}  // namespace

TEST_CASE("http api: a token-id completion returns the model's greedy tokens", "[integration][http]") {
  server_fixture s(llama_config());
  test::reference ref("tiny-llama3");
  json body = {{"model", "tiny-llama3"}, {"prompt", ref.ids("p3.ids")}, {"max_tokens", 8},
               {"temperature", 0}, {"ignore_eos", true}};
  const auto r = curl(s.url("/v1/completions"), body.dump());
  REQUIRE(r.status == 200);
  const auto ids = r.j()["choices"][0]["token_ids"].get<std::vector<msg::token_id>>();
  test::sim_model sm("tiny-llama3");
  model::kv_cache cache(*sm.dev, sm.model->config(), 8, 16);
  model::generate_request g;
  g.prompt = ref.ids("p3.ids");
  g.max_tokens = 8;
  g.ignore_eos = true;
  CHECK(test::mismatch(ids, test::reference_alone(*sm.model, cache, g)) == "");
  CHECK(r.j()["usage"]["completion_tokens"] == 8);
}

TEST_CASE("http api: bad input is a 4xx OpenAI error and nothing is queued", "[integration][http]") {
  server_fixture s(llama_config());
  const std::string ok = R"("model": "tiny-llama3", "prompt": [1, 2, 3])";
  struct bad_case {
    const char* what;
    std::string body;
    int status;
    const char* mentions;
  };
  const std::vector<bad_case> cases = {
      {"malformed JSON", "{\"model\": ", 400, "JSON"},
      {"not an object", "[1, 2]", 400, "object"},
      {"wrong type", "{" + ok + R"(, "max_tokens": "ten"})", 400, "max_tokens"},
      {"unknown model", R"({"model": "gpt-9", "prompt": [1]})", 404, "gpt-9"},
      {"negative max_tokens", "{" + ok + R"(, "max_tokens": -5})", 400, "max_tokens"},
      {"huge max_tokens", "{" + ok + R"(, "max_tokens": 100000000})", 400, "max_tokens"},
      {"prompt over max_model_len", long_prompt_body(600), 400, "maximum context length"},
      {"n over the limit", "{" + ok + R"(, "n": 1000})", 400, "'n'"},
      {"invalid UTF-8", "{\"model\": \"tiny-llama3\", \"prompt\": \"\xff\xfe\"}", 400, "JSON"},
      {"text without a tokenizer", R"({"model": "tiny-llama3", "prompt": "hello"})", 400,
       "tokenizer"},
      {"token id out of range", R"({"model": "tiny-llama3", "prompt": [99999]})", 400, "token"},
      {"temperature out of range", "{" + ok + R"(, "temperature": 7})", 400, "temperature"},
  };
  const auto before = s.stats();
  for (const auto& c : cases) {
    INFO(c.what);
    const auto r = curl(s.url("/v1/completions"), c.body);
    CHECK(r.status == c.status);
    const json j = r.j();
    REQUIRE(j.contains("error"));
    CHECK_THAT(j["error"]["message"].get<std::string>(), Catch::Contains(c.mentions));
  }
  const auto big = curl(s.url("/v1/completions"), "{" + ok + ", \"user\": \"" + std::string(5000, 'x') + "\"}");
  CHECK(big.status == 413);
  CHECK(curl(s.url("/v1/nowhere"), "{}").status == 404);
  const auto after = s.stats();
  CHECK(after.prompt_tokens == before.prompt_tokens);
  CHECK(after.num_steps == before.num_steps);
  CHECK(curl(s.url("/health")).status == 200);  // the server is unaffected
}

TEST_CASE("http api: with API keys, a missing or wrong key is 401 and queues nothing",
          "[integration][http]") {
  auto cfg = llama_config();
  cfg.server.api_keys = {{"k1", "team-a"}};
  server_fixture s(cfg);
  const std::string body = R"({"model": "tiny-llama3", "prompt": [1, 2], "max_tokens": 2})";
  CHECK(curl(s.url("/v1/completions"), body).status == 401);
  CHECK(curl(s.url("/v1/completions"), body, "-H 'Authorization: Bearer nope'").status == 401);
  CHECK(curl(s.url("/v1/models"), "", "-H 'Authorization: Bearer nope'").status == 401);
  CHECK(s.stats().prompt_tokens == 0);
  CHECK(curl(s.url("/v1/completions"), body, "-H 'Authorization: Bearer k1'").status == 200);
}

TEST_CASE("http api: beyond the waiting queue the answer is 503", "[integration][http]") {
  auto cfg = llama_config();
  cfg.scheduler.max_num_seqs = 1;
  cfg.server.max_waiting = 1;
  server_fixture s(cfg);
  const std::string body =
      R"({"model": "tiny-llama3", "prompt": [1, 2], "max_tokens": 400, "ignore_eos": true})";
  std::vector<std::thread> clients;
  std::vector<int> codes(4);
  std::vector<std::string> heads(4);
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([&, i] {
      const std::string head_file =
          "/tmp/courier_503_head_" + std::to_string(::getpid()) + "_" + std::to_string(i);
      codes[i] = curl(s.url("/v1/completions"), body, "-D " + head_file).status;
      std::ifstream f(head_file);
      heads[i].assign(std::istreambuf_iterator<char>(f), {});
      std::remove(head_file.c_str());
    });
  }
  for (auto& t : clients) t.join();
  CHECK(std::count(codes.begin(), codes.end(), 503) >= 1);
  CHECK(std::count(codes.begin(), codes.end(), 200) >= 2);
  for (int i = 0; i < 4; ++i) {
    if (codes[i] != 503) continue;
    INFO(heads[i]);
    CHECK(heads[i].find("Retry-After: ") != std::string::npos);  // when to come back
  }
}

TEST_CASE("http api: a stream to an allowed browser origin says so in its head",
          "[integration][http]") {
  auto cfg = llama_config();
  cfg.server.cors_allowed_origins = {"https://app.example"};
  server_fixture s(cfg);
  json body = {{"model", "tiny-llama3"}, {"prompt", {1, 2, 3}}, {"max_tokens", 3},
               {"ignore_eos", true}, {"stream", true}};
  http::test::raw_client c(s.server->port());
  c.write(http::test::post("/v1/completions", body.dump(),
                           "Content-Type: application/json\r\nOrigin: https://app.example\r\n"));
  const http::test::reply r = c.read_reply();
  CHECK(r.status == 200);
  CHECK(r.header("content-type") == "text/event-stream");
  CHECK(r.header("access-control-allow-origin") == "https://app.example");
  CHECK(r.header("vary") == "Origin");
  CHECK(r.body.find("data: [DONE]") != std::string::npos);
}

TEST_CASE("http api: a client that disconnects cancels its request and frees its blocks",
          "[integration][http]") {
  auto cfg = llama_config();
  cfg.model.max_model_len = 8192;  // a request that runs for seconds
  server_fixture s(cfg);
  for (const bool stream : {true, false}) {
    INFO((stream ? "streaming" : "non-streaming"));
    json body = {{"model", "tiny-llama3"}, {"prompt", {1, 2, 3}}, {"max_tokens", 8000},
                 {"ignore_eos", true}, {"stream", stream}};
    const auto r = curl(s.url("/v1/completions"), body.dump(), "--max-time 0.3");
    // curl gave up before the end: no [DONE] for a stream, no status line for a plain body.
    if (stream) {
      CHECK(r.body.find("[DONE]") == std::string::npos);
    } else {
      CHECK(r.status == 0);
    }
    msg::scheduler_stats st;
    for (int i = 0; i < 100; ++i) {
      st = s.stats();
      if (st.num_running == 0 && st.num_waiting == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CHECK(st.num_running == 0);
    CHECK(st.num_cancelled >= 1);
    CHECK(st.num_free_blocks + st.num_cached_blocks == st.num_total_blocks);
  }
}

TEST_CASE("http api: echo with logprobs and max_tokens 0 scores the prompt", "[integration][http]") {
  server_fixture s(llama_config());
  json body = {{"model", "tiny-llama3"}, {"prompt", {5, 6, 7, 8}}, {"max_tokens", 0},
               {"echo", true}, {"logprobs", 1}};
  const auto r = curl(s.url("/v1/completions"), body.dump());
  REQUIRE(r.status == 200);
  const json lp = r.j()["choices"][0]["logprobs"];
  REQUIRE(lp["tokens"].size() == 4);
  CHECK(lp["tokens"][0] == "token_id:5");
  CHECK(lp["token_logprobs"][0].is_null());
  CHECK(lp["top_logprobs"][0].is_null());
  for (int i = 1; i < 4; ++i) {
    CHECK(lp["token_logprobs"][i].get<double>() <= 0.0);
    CHECK(lp["top_logprobs"][i].size() == 1);
  }
  CHECK(r.j()["usage"]["completion_tokens"] == 0);
  CHECK(r.j()["choices"][0]["finish_reason"] == "length");
}

TEST_CASE("http api: without API keys, requests share one tenant's lookup scope",
          "[integration][http][speculative]") {
  auto cfg = llama_config();
  cfg.scheduler.prefix_caching = false;  // the prompt is recomputed; only drafting is shared
  cfg.speculative.prompt_lookup.enabled = true;
  cfg.speculative.prompt_lookup.num_draft = 5;
  cfg.speculative.shared_cache_mb = 16;
  REQUIRE(cfg.server.api_keys.empty());
  server_fixture s(cfg);
  std::vector<int> prompt;
  for (int t = 0; t < 30; ++t) prompt.push_back((t * 37 + 11) % 2048);
  const json body = {{"model", "tiny-llama3"}, {"prompt", prompt}, {"max_tokens", 40},
                     {"temperature", 0}, {"ignore_eos", true}};
  const auto first = curl(s.url("/v1/completions"), body.dump());
  REQUIRE(first.status == 200);
  const auto before = s.stats();
  const auto second = curl(s.url("/v1/completions"), body.dump());
  REQUIRE(second.status == 200);
  // The first request's prompt and output, stored in the shared scope, draft for the second.
  CHECK(s.stats().spec_draft_tokens_shared > before.spec_draft_tokens_shared);
  CHECK(second.j()["choices"][0]["token_ids"] == first.j()["choices"][0]["token_ids"]);
}

TEST_CASE("http api: /server_info gives the engine's KV cache and the config's limits, behind the "
          "key, without secrets",
          "[integration][http]") {
  auto cfg = llama_config();
  cfg.server.api_keys = {{"secret-k1", "team-a"}};
  cfg.server.responses_store_mb = 5;
  cfg.scheduler.block_size = 32;
  cfg.scheduler.num_kv_blocks = 77;
  cfg.scheduler.max_num_seqs = 7;
  cfg.scheduler.max_batched_tokens = 333;
  cfg.cache.host_tier_mb = 1;
  cfg.speculative.prompt_lookup.enabled = true;
  cfg.speculative.prompt_lookup.num_draft = 3;
  server_fixture s(cfg);
  CHECK(curl(s.url("/server_info")).status == 401);
  const auto r = curl(s.url("/server_info"), "", "-H 'Authorization: Bearer secret-k1'");
  REQUIRE(r.status == 200);
  const json info = r.j();
  const msg::engine_ready& ready = s.rt.ready();
  const json& kv = info["kv_cache"];
  CHECK(kv["block_size"] == 32);
  CHECK(kv["num_blocks"] == 77);
  CHECK(kv["capacity_tokens"] == 77 * 32);
  REQUIRE(ready.host_kv_blocks > 0);  // 1 MB holds some of tiny-llama3's blocks
  CHECK(kv["host_tier_blocks"] == ready.host_kv_blocks);
  REQUIRE(ready.kv_block_bytes > 0);
  CHECK(kv["block_bytes"] == ready.kv_block_bytes);
  CHECK(kv["prefix_caching"] == true);
  CHECK(kv["cache_isolation"] == "tenant");  // auto, with API keys
  CHECK(kv["disk_tier"] == false);
  CHECK(info["model"]["name"] == "tiny-llama3");
  CHECK(info["model"]["max_model_len"] == 512);
  CHECK(info["model"]["vocab_size"] == ready.vocab_size);
  CHECK(info["model"]["recurrent"] == false);
  CHECK(info["device"]["name"] == ready.device_name);
  CHECK(info["device"]["backend"] == "sim");
  CHECK(info["scheduler"]["max_num_seqs"] == 7);
  CHECK(info["scheduler"]["max_batched_tokens"] == 333);
  CHECK(info["speculative"]["prompt_lookup"] == true);
  CHECK(info["speculative"]["num_draft"] == 3);
  CHECK(info["server"]["auth"] == true);
  CHECK(info["server"]["responses_store_mb"] == 5);
  CHECK_FALSE(info.contains("recurrent_state"));
  CHECK_FALSE(info.contains("cluster"));
  // Neither the key nor the tenant, nor the model's folder, is told.
  CHECK(r.body.find("secret-k1") == std::string::npos);
  CHECK(r.body.find("team-a") == std::string::npos);
  CHECK(r.body.find(cfg.model.path) == std::string::npos);
}

}  // namespace courier_test_integration_http_api
