// LoRA adapters through a front end (cluster.replicas): loading one over HTTP loads it on every
// replica (each reads the folder on its own machine), requests for it give its tokens whichever
// replica serves them, a refusal names the replica, and unloading reaches them all.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/http_fixture.hpp"
#include "tests/support/lora_fixture.hpp"
#include "tests/support/lora_reference.hpp"
#include "tests/support/reference_match.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_cluster_lora {

using namespace courier;
using nlohmann::json;

namespace {

const char* const model_name = "tiny-llama3";

config::server_config with_adapters(config::server_config cfg) {
  cfg.lora.runtime_loading = true;
  cfg.lora.max_loras = 2;
  return cfg;
}

std::unique_ptr<actors::runtime> replica() {
  auto cfg = with_adapters(test::sim_config(model_name));
  cfg.device.sim.threads = 1;
  cfg.cluster.listen = "127.0.0.1:0";
  return std::make_unique<actors::runtime>(cfg);
}

// Two replicas and a front end routing among them with `routing`, which loads adapters.
struct two_replicas {
  std::vector<std::unique_ptr<actors::runtime>> rs;
  std::unique_ptr<test::server_fixture> front;

  explicit two_replicas(const std::string& routing) {
    rs.push_back(replica());
    rs.push_back(replica());
    auto cfg = with_adapters(test::sim_config(model_name));
    for (const auto& r : rs) {
      cfg.cluster.replicas.push_back("127.0.0.1:" + std::to_string(r->cluster_port()));
    }
    cfg.cluster.routing = routing;
    cfg.cluster.heartbeat_ms = 100;
    cfg.server.api_keys = {{"root", "ops"}};
    cfg.server.admin_tenants = {"ops"};
    front = std::make_unique<test::server_fixture>(cfg);
  }
};

const std::string root = "-H 'Authorization: Bearer root'";

}  // namespace

TEST_CASE("cluster: an adapter loaded through a front end is loaded on every replica and its "
          "requests give its tokens on each; unloading reaches them all",
          "[integration][cluster][lora]") {
  const test::lora_fixture a(model_name, "--seed 41 --rank 8 --alpha 16 --targets q_proj,down_proj");
  two_replicas c("round_robin");
  const auto& rs = c.rs;
  test::server_fixture& front = *c.front;
  auto load = [&](const std::string& dir) {
    return test::curl(front.url("/v1/load_lora_adapter"),
                      json({{"lora_name", "fresh"}, {"lora_path", dir}}).dump(), root);
  };
  const std::vector<msg::token_id> prompt = {5, 17, 300, 41, 9, 1000, 77};
  auto complete = [&] {
    return test::curl(front.url("/v1/completions"),
                      json({{"model", "fresh"},
                            {"prompt", prompt},
                            {"max_tokens", 8},
                            {"temperature", 0},
                            {"ignore_eos", true},
                            {"return_token_ids", true}})
                          .dump(),
                      root);
  };
  CHECK(complete().status == 404);
  REQUIRE(load(a.adapter()).status == 200);
  const auto want = test::lora_reference(model_name, a.adapter(), prompt, 8);
  for (int i = 0; i < 4; ++i) {  // round robin: each replica serves two
    const auto r = complete();
    REQUIRE(r.status == 200);
    CHECK(test::mismatch(r.j()["choices"][0]["token_ids"].get<std::vector<msg::token_id>>(),
                         want) == "");
  }
  for (const auto& r : rs) {  // each replica holds it itself
    caf::scoped_actor self{r->system()};
    msg::lora_ack ack;
    self->request(r->scheduler(), std::chrono::seconds(30),
                  msg::lora_change{msg::lora_change::load, "fresh", a.adapter()})
        .receive([&](msg::lora_ack& x) { ack = x; }, [](caf::error&) {});
    CHECK_FALSE(ack.ok);  // taken there already
  }
  // Another model's adapter: each replica refuses it; the answer names one and the file.
  const test::lora_fixture other("tiny-qwen2", "--seed 42 --rank 8 --alpha 8 --targets q_proj");
  const auto bad = test::curl(front.url("/v1/load_lora_adapter"),
                              json({{"lora_name", "other"}, {"lora_path", other.adapter()}}).dump(),
                              root);
  CHECK(bad.status == 400);
  CHECK_THAT(bad.body, Catch::Contains("replica 127.0.0.1:"));
  CHECK_THAT(bad.body, Catch::Contains("adapter_model.safetensors"));
  const auto unload =
      test::curl(front.url("/v1/unload_lora_adapter"), json({{"lora_name", "fresh"}}).dump(), root);
  CHECK(unload.status == 200);
  CHECK(complete().status == 404);
}

TEST_CASE("cluster: cache-aware routing follows an adapter's prefix to the replica that cached "
          "it (the router names an adapter's blocks as the replicas do)",
          "[integration][cluster][lora]") {
  const test::lora_fixture a(model_name, "--seed 43 --rank 8 --alpha 16 --targets q_proj");
  two_replicas c("cache_aware");
  test::server_fixture& front = *c.front;
  REQUIRE(test::curl(front.url("/v1/load_lora_adapter"),
                     json({{"lora_name", "fresh"}, {"lora_path", a.adapter()}}).dump(), root)
              .status == 200);
  std::vector<msg::token_id> head;  // four whole blocks shared by every prompt
  for (int i = 0; i < 64; ++i) head.push_back(static_cast<msg::token_id>(100 + 7 * i));
  // One at a time, so that the loads stay balanced and the longest cached prefix decides. The
  // first request's blocks, stored under the adapter's namespace on the replica that served it,
  // reach the router as that replica's cache events, before its last token event; each later
  // prompt, sent at once, goes there and finds them. (Were an adapter's blocks unknown to the
  // router, or its events late, the replica caching fewer blocks would win each tie, and every
  // second prompt would find nothing cached.)
  for (int i = 0; i < 4; ++i) {
    std::vector<msg::token_id> prompt = head;
    for (int k = 0; k < 5; ++k) prompt.push_back(static_cast<msg::token_id>(1500 + 31 * i + k));
    const auto r = test::curl(front.url("/v1/completions"),
                              json({{"model", "fresh"},
                                    {"prompt", prompt},
                                    {"max_tokens", 2},
                                    {"temperature", 0}})
                                  .dump(),
                              root);
    INFO(r.body);
    REQUIRE(r.status == 200);
    const auto cached = r.j()["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>();
    INFO("request " << i);
    if (i == 0) {
      CHECK(cached == 0);
    } else {
      CHECK(cached >= 64);
    }
  }
}

}  // namespace courier_test_integration_cluster_lora
