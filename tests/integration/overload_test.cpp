// Overload at the curl level: a request's choices are queued together or refused together, and
// a refusal is a plain HTTP error with a JSON body, streaming or not; a 503 says Retry-After.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/support/http_fixture.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_overload {

using namespace courier;
using nlohmann::json;

namespace {

struct reply_with_headers {
  test::reply r;
  std::string headers;  // lower-cased
};

// curl with the response headers kept, and a limit well under the test's.
reply_with_headers curl_headers(const std::string& url, const std::string& body) {
  static int n = 0;
  const std::string path = "/tmp/courier_overload_headers_" + std::to_string(::getpid()) + "_" +
                           std::to_string(n++);
  reply_with_headers out;
  out.r = test::curl(url, body, "--max-time 20 -D " + path);
  std::ifstream f(path, std::ios::binary);
  out.headers.assign(std::istreambuf_iterator<char>(f), {});
  std::transform(out.headers.begin(), out.headers.end(), out.headers.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::remove(path.c_str());
  return out;
}

}  // namespace

TEST_CASE("overload: a request whose choices do not all fit is refused whole, with 503 and "
          "Retry-After, streaming or not",
          "[integration][http]") {
  auto cfg = test::sim_config("tiny-llama3");
  cfg.model.max_model_len = 8192;  // the blocking requests run for seconds
  cfg.scheduler.max_num_seqs = 1;
  cfg.server.max_waiting = 2;
  test::server_fixture s(cfg);
  // One request holds the only slot and one waits: the queue has room for one choice more.
  caf::scoped_actor self{s.rt.system()};
  for (msg::request_id id : {1'000'001, 1'000'002}) {
    msg::submit b;
    b.id = id;
    b.prompt = {1, 2, 3};
    b.max_tokens = 8000;
    b.ignore_eos = true;
    b.reply_to = caf::actor_cast<caf::actor>(self);
    self->send(s.rt.scheduler(), std::move(b));
  }
  msg::scheduler_stats before;
  for (int i = 0; i < 200; ++i) {
    before = s.stats();
    if (before.num_running == 1 && before.num_waiting == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(before.num_running == 1);
  REQUIRE(before.num_waiting == 1);

  for (const bool stream : {false, true}) {
    INFO((stream ? "streaming" : "non-streaming"));
    const json body = {{"model", "tiny-llama3"}, {"prompt", {1, 2}}, {"max_tokens", 4},
                       {"n", 2}, {"stream", stream}};
    const auto got = curl_headers(s.url("/v1/completions"), body.dump());
    CHECK(got.r.status == 503);
    const json j = got.r.j();
    REQUIRE(j.is_object());
    REQUIRE(j.contains("error"));
    CHECK(j["error"]["type"] == "server_overloaded");
    CHECK(got.headers.find("content-type: application/json") != std::string::npos);
    CHECK(got.headers.find("retry-after: 1\r\n") != std::string::npos);
  }
  // More choices than can ever wait is the client's to fix: 400, and no Retry-After.
  const json too_many = {{"model", "tiny-llama3"}, {"prompt", {1, 2}}, {"max_tokens", 4},
                         {"n", 3}, {"stream", true}};
  const auto big = curl_headers(s.url("/v1/completions"), too_many.dump());
  CHECK(big.r.status == 400);
  CHECK_THAT(big.r.body, Catch::Contains("server.max_waiting"));
  CHECK(big.headers.find("retry-after") == std::string::npos);
  // Nothing of the refused requests was queued: not one choice of them.
  const auto after = s.stats();
  CHECK(after.num_waiting == 1);
  CHECK(after.prompt_tokens == before.prompt_tokens);
  for (msg::request_id id : {1'000'001, 1'000'002}) {
    self->send(s.rt.scheduler(), msg::cancel{id, msg::cancel_reason::client_gone});
  }
}

}  // namespace courier_test_integration_overload
