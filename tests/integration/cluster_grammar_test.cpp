// Structured outputs through a front end (cluster.replicas): the router sends a request's
// grammar as GBNF text, each replica's gate compiles it against the replica's own vocabulary,
// and the answer over HTTP is exactly one server's, inside the grammar. A replica that cannot
// compile (no compiler set) fails the request with a clear error instead of answering free. The
// front end's /metrics carries the replicas' metrics, each sample labelled with its replica.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <thread>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "actors/admission/admission_context.hpp"
#include "tests/support/http_fixture.hpp"
#include "tests/support/prometheus_text.hpp"
#include "tests/support/text_assets.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_cluster_grammar {

using namespace courier;
using nlohmann::json;

namespace {

const char* const model_name = "tiny-qwen3";

// A replica as `courier serve --set cluster.listen=...` makes it: its own admission context,
// whose grammar registry compiles what comes over the wire (compile: false leaves it unset).
struct replica {
  std::unique_ptr<actors::runtime> rt;
  std::shared_ptr<admission::admission_context> ctx =
      std::make_shared<admission::admission_context>();

  // before: called ahead of each compile (the GBNF text), e.g. to hold it.
  explicit replica(bool compile, std::function<void(const std::string&)> before = {}) {
    auto cfg = test::sim_config(model_name);
    cfg.device.sim.threads = 1;
    cfg.cluster.listen = "127.0.0.1:0";
    rt = std::make_unique<actors::runtime>(cfg);
    test::use_shared_text_assets(*ctx, cfg.model.path);
    admission::configure_context(*ctx, cfg, rt->ready());
    if (compile) {
      rt->set_wire_grammars(
          [g = ctx->grammars, before](const std::string& gbnf, const std::string&) {
            if (before) before(gbnf);
            return g->get({admission::grammar_spec::kind::gbnf, gbnf, false}, "");
          });
    }
  }
};

config::server_config front_config(const std::vector<std::unique_ptr<replica>>& rs) {
  auto cfg = test::sim_config(model_name);
  for (const auto& r : rs) {
    cfg.cluster.replicas.push_back("127.0.0.1:" + std::to_string(r->rt->cluster_port()));
  }
  cfg.cluster.routing = "round_robin";
  // Not 100 ms: three heartbeats unanswered within about 1.3 s mark a replica down, and a
  // sanitized replica on a loaded machine can stall that long (its requests then move, and one
  // is served twice: the count of served requests below is off).
  cfg.cluster.heartbeat_ms = 500;
  return cfg;
}

json chat(const std::string& user, json constraint) {
  json body = {{"model", model_name},
               {"messages", json::array({{{"role", "user"}, {"content", user}}})},
               {"max_tokens", 40},
               {"temperature", 0}};
  body.update(constraint);
  return body;
}

const std::vector<std::string> choices = {"amber", "cobalt", "crimson", "viridian"};

std::vector<json> bodies() {
  const json schema = {{"type", "object"},
                       {"properties",
                        {{"name", {{"type", "string"}, {"maxLength", 6}}},
                         {"age", {{"type", "integer"}, {"minimum", 0}, {"maximum", 99}}}}},
                       {"required", {"name", "age"}},
                       {"additionalProperties", false}};
  std::vector<json> out;
  for (const char* user : {"Pick a colour.", "Another one?", "Your favourite?"}) {
    out.push_back(chat(user, {{"guided_choice", choices}}));
  }
  out.push_back(chat("Describe a person.",
                     {{"response_format",
                       {{"type", "json_schema"},
                        {"json_schema", {{"name", "person"}, {"schema", schema}, {"strict", true}}}}}}));
  out.push_back(chat("Pick a number.", {{"guided_regex", "[1-9][0-9]?"}}));
  return out;
}

std::string content(const test::reply& r) {
  const json j = r.j();
  return j.at("choices").at(0).at("message").at("content").get<std::string>();
}

}  // namespace

TEST_CASE("cluster: structured outputs through a front end: the replica compiles the grammar "
          "and answers exactly as one server, inside the grammar",
          "[integration][cluster]") {
  std::vector<std::unique_ptr<replica>> rs;
  rs.push_back(std::make_unique<replica>(true));
  rs.push_back(std::make_unique<replica>(true));
  test::server_fixture front(front_config(rs));
  test::server_fixture one(test::sim_config(model_name));
  for (const json& body : bodies()) {
    INFO(body.dump());
    // Twice: round robin sends the two tries to different replicas.
    for (int t = 0; t < 2; ++t) {
      const test::reply got = test::curl(front.url("/v1/chat/completions"), body.dump());
      const test::reply want = test::curl(one.url("/v1/chat/completions"), body.dump());
      REQUIRE(got.status == 200);
      REQUIRE(want.status == 200);
      CHECK(content(got) == content(want));
      if (body.contains("guided_choice")) {
        CHECK(std::find(choices.begin(), choices.end(), content(got)) != choices.end());
      } else if (body.contains("response_format")) {
        const json p = json::parse(content(got));
        CHECK(p.at("name").get<std::string>().size() <= 6);
        CHECK(p.at("age").get<int>() >= 0);
        CHECK(p.size() == 2);
      } else {
        const int n = std::stoi(content(got));
        CHECK((n >= 1 && n <= 99));
      }
    }
  }
  // Unconstrained, the model says something else: the grammar did the work.
  json free_body = bodies().front();
  free_body.erase("guided_choice");
  const test::reply free = test::curl(front.url("/v1/chat/completions"), free_body.dump());
  REQUIRE(free.status == 200);
  CHECK(std::find(choices.begin(), choices.end(), content(free)) == choices.end());

  // The front end's /metrics holds each replica's samples under its label, as the replica's
  // own /metrics has them, each family's TYPE once.
  const test::reply m = test::curl(front.url("/metrics"));
  REQUIRE(m.status == 200);
  const auto merged = test::parse_prometheus(m.body);
  // The sum of `name`'s samples (over its other labels) whose replica label is `at` ("": none).
  auto sum = [](const std::vector<test::prom_sample>& v, const std::string& name,
                const std::string& at) {
    double total = 0;
    for (const auto& x : v) {
      const auto it = x.labels.find("replica");
      const std::string replica = it == x.labels.end() ? "" : it->second;
      if (x.name == name && replica == at) total += x.value;
    }
    return total;
  };
  double served = 0;
  for (const auto& r : rs) {
    const std::string at = "127.0.0.1:" + std::to_string(r->rt->cluster_port());
    caf::scoped_actor self{r->rt->system()};
    std::string own;
    self->request(r->rt->telemetry(), std::chrono::seconds(10), msg::scrape_atom_v)
        .receive([&](std::string& t) { own = std::move(t); }, [](caf::error&) {});
    const auto mine = test::parse_prometheus(own);
    const double ok = sum(mine, "courier:request_success_total", "");
    CHECK(ok > 0);  // round robin: both served
    CHECK(sum(merged, "courier:request_success_total", at) == ok);
    CHECK(sum(merged, "courier:prompt_tokens_total", at) ==
          sum(mine, "courier:prompt_tokens_total", ""));
    served += ok;
  }
  CHECK(served == 2 * bodies().size() + 1);
  std::size_t types = 0;
  for (std::size_t at = m.body.find("# TYPE courier:request_success_total ");
       at != std::string::npos; at = m.body.find("# TYPE courier:request_success_total ", at + 1)) {
    ++types;
  }
  CHECK(types == 1);
}

TEST_CASE("cluster: a replica that cannot compile a grammar fails the request with a clear error",
          "[integration][cluster]") {
  std::vector<std::unique_ptr<replica>> rs;
  rs.push_back(std::make_unique<replica>(false));
  test::server_fixture front(front_config(rs));
  const test::reply r =
      test::curl(front.url("/v1/chat/completions"), bodies().front().dump());
  CHECK(r.status == 400);
  CHECK_THAT(r.body, Catch::Contains("cannot compile grammars"));
  json free_body = bodies().front();
  free_body.erase("guided_choice");
  CHECK(test::curl(front.url("/v1/chat/completions"), free_body.dump()).status == 200);
}

TEST_CASE("cluster: a replica compiles a grammar off its gate: while one compiles, other "
          "requests are served",
          "[integration][cluster]") {
  // The compile of the guided_choice grammar is held until the plain request has its answer.
  // Compiled on the gate itself (before), the plain request would wait behind it: the hold
  // gives up after 30 s, and the test fails on `gave_up`.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> holding{false}, gave_up{false};
  std::vector<std::unique_ptr<replica>> rs;
  rs.push_back(std::make_unique<replica>(true, [&](const std::string& gbnf) {
    if (gbnf.find("amber") == std::string::npos) return;
    holding = true;
    if (released.wait_for(std::chrono::seconds(30)) != std::future_status::ready) gave_up = true;
  }));
  test::server_fixture front(front_config(rs));
  test::reply constrained;
  std::thread held([&] {
    constrained = test::curl(front.url("/v1/chat/completions"), bodies().front().dump());
  });
  for (int i = 0; i < 3000 && !holding; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(holding);
  json free_body = bodies().front();
  free_body.erase("guided_choice");
  const test::reply free = test::curl(front.url("/v1/chat/completions"), free_body.dump());
  CHECK_FALSE(gave_up);
  release.set_value();
  held.join();
  CHECK(free.status == 200);
  REQUIRE(constrained.status == 200);
  CHECK(std::find(choices.begin(), choices.end(), content(constrained)) != choices.end());
}

}  // namespace courier_test_integration_cluster_grammar
