// Admission's text work (parsing bodies, chat templates, tokenizing) runs on the server's text
// pool, not on CAF's workers (which relay tokens) nor on the HTTP I/O thread: with every text
// thread held, a running stream still gets all its tokens and /health answers, while a new
// request waits its turn and then runs (bench/victim-stream.sh measures the same under a flood).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/actors/admission/http/raw_client.hpp"
#include "tests/actors/admission/http/test_server.hpp"
#include "tests/support/http_fixture.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_admission_isolation {

using namespace courier;
using nlohmann::json;

TEST_CASE("admission isolation: a held text pool stalls new requests, not running streams",
          "[integration][http]") {
  auto cfg = test::sim_config("tiny-llama3");
  cfg.server.admission_threads = 1;
  test::server_fixture s(cfg);
  const json stream_body = {{"model", "tiny-llama3"}, {"prompt", {1, 2, 3}}, {"max_tokens", 200},
                            {"ignore_eos", true},     {"stream", true}};
  http::test::raw_client c(s.server->port(), std::chrono::seconds(60));
  c.write(http::test::post("/v1/completions", stream_body.dump(),
                           "Content-Type: application/json\r\n"));
  // The stream starts once its body is parsed and the scheduler has queued it.
  REQUIRE(c.read_head().status == 200);

  // Hold the pool's only thread (the gate opens on every path, so teardown never hangs).
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<bool> held{false};
  s.server->text_jobs().post([gate, &held] {
    held = true;
    gate.wait();
  });
  for (int i = 0; i < 1000 && !held; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));

  // A new request queues behind the held job.
  const json later_body = {{"model", "tiny-llama3"}, {"prompt", {4, 5}}, {"max_tokens", 4}};
  auto later = std::async(std::launch::async, [&] {
    return test::curl(s.url("/v1/completions"), later_body.dump(), "--max-time 60");
  });

  // The running stream ends with all its tokens although no text thread is free.
  std::string events;
  try {
    while (auto chunk = c.read_chunk()) events += *chunk;
  } catch (const std::exception& e) {
    FAIL_CHECK("the stream stalled: " << e.what());
  }
  const bool still_held = later.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
  const auto health = test::curl(s.url("/health"), "", "--max-time 10");
  const msg::scheduler_stats st = s.stats();
  release.set_value();

  CHECK(held);
  CHECK_THAT(events, Catch::Contains("\"finish_reason\":\"length\""));
  CHECK_THAT(events, Catch::Contains("data: [DONE]"));
  CHECK(st.generated_tokens == 200);  // the stream's, and none of the queued request's
  CHECK(still_held);
  CHECK(health.status == 200);
  const auto r = later.get();  // runs once the pool is free
  CHECK(r.status == 200);
  CHECK(r.j()["usage"]["completion_tokens"] == 4);
}

TEST_CASE("admission isolation: bodies over 1 MiB queue apart, never ahead of ordinary ones",
          "[integration][http]") {
  auto cfg = test::sim_config("tiny-llama3");
  cfg.server.admission_threads = 1;
  test::server_fixture s(cfg);
  // Hold the bulk lane, as a flood of megabyte bodies would.
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  s.server->bulk_text_jobs().post([gate] { gate.wait(); });
  const std::size_t big = admission::admission_server::large_body_bytes + 1;
  const json large = {{"model", "tiny-llama3"}, {"prompt", std::vector<int>(big / 2, 7)},
                      {"max_tokens", 1}};
  auto queued = std::async(std::launch::async, [&] {
    return test::curl(s.url("/v1/completions"), large.dump(), "--max-time 60");
  });
  // An ordinary request is served while the large one waits.
  const json small = {{"model", "tiny-llama3"}, {"prompt", {4, 5}}, {"max_tokens", 4}};
  const auto r = test::curl(s.url("/v1/completions"), small.dump(), "--max-time 30");
  const bool large_waited = queued.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
  release.set_value();
  CHECK(r.status == 200);
  CHECK(large_waited);
  // Then the large one is answered: too long for the model (a 400), not lost.
  const auto l = queued.get();
  CHECK(l.status == 400);
  CHECK(l.j()["error"]["code"] == "context_length_exceeded");
}

TEST_CASE("admission isolation: grammars compile on a lane of their own: a slow one holds up "
          "only requests that need one compiled",
          "[integration][http]") {
  auto cfg = test::sim_config("tiny-qwen3");  // a tokenizer: grammars are over text
  cfg.server.admission_threads = 1;
  test::server_fixture s(cfg);
  // Hold the grammar lane, as a grammar at the compile limits would.
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  s.server->grammar_jobs().post([gate] { gate.wait(); });
  const json guided = {{"model", "tiny-qwen3"},
                       {"messages", {{{"role", "user"}, {"content", "Hi"}}}},
                       {"guided_regex", "[a-z]{3}"},
                       {"max_tokens", 8}};
  auto queued = std::async(std::launch::async, [&] {
    return test::curl(s.url("/v1/chat/completions"), guided.dump(), "--max-time 60");
  });
  // Plain requests and /tokenize are served while the grammar request waits.
  const json plain = {{"model", "tiny-qwen3"},
                      {"messages", {{{"role", "user"}, {"content", "Hi"}}}},
                      {"max_tokens", 2}};
  const auto r = test::curl(s.url("/v1/chat/completions"), plain.dump(), "--max-time 30");
  const auto t = test::curl(s.url("/tokenize"), json({{"prompt", "hello"}}).dump(), "--max-time 30");
  const bool guided_waited = queued.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
  release.set_value();
  CHECK(r.status == 200);
  CHECK(t.status == 200);
  CHECK(guided_waited);
  // Then it is compiled and served, held to its grammar.
  const auto g = queued.get();
  REQUIRE(g.status == 200);
  const std::string text = g.j()["choices"][0]["message"]["content"].get<std::string>();
  CHECK(text.size() == 3);
  CHECK(std::all_of(text.begin(), text.end(), [](char c) { return c >= 'a' && c <= 'z'; }));
}

}  // namespace courier_test_integration_admission_isolation
