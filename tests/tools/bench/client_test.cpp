// courier-bench's client end to end against a scripted in-test server: timestamps, the
// concurrency limit, and every way a request can fail, none of which may hang the run.
#include <catch2/catch.hpp>
#include <chrono>

#include "tests/tools/bench/fake_sse_server.hpp"
#include "tools/bench/load_runner.hpp"
#include "tools/bench/metrics.hpp"
#include "tools/bench/model_query.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_tools_bench_client {

namespace {

using namespace courier::bench_tool;
namespace fake = courier::test::bench;

load_config config_for(const fake::fake_sse_server& server, double timeout_s = 10) {
  load_config c;
  c.client.url = parse_base_url(server.base_url());
  c.client.body.model = "tiny";
  c.client.body.ignore_eos = true;
  c.client.timeout_s = timeout_s;
  return c;
}

std::vector<bench_request> requests(std::size_t n) {
  std::vector<bench_request> out(n);
  for (bench_request& r : out) {
    r.prompt_ids = {1, 2, 3};
    r.input_len = 3;
    r.output_len = 2;
  }
  return out;
}

std::vector<request_record> run(const load_config& c, std::size_t n,
                                std::int64_t max_concurrency = 0) {
  load_config cc = c;
  cc.max_concurrency = max_concurrency;
  const auto reqs = requests(n);
  return run_load(cc, reqs, std::vector<double>(n, 0.0));
}

fake::scripted_response two_tokens(int first_delay_ms, int gap_ms) {
  return {200,
          {{first_delay_ms, fake::text_chunk("a")},
           {gap_ms, fake::text_chunk("bc")},
           {0, fake::usage_chunk(3, 2, 1) + fake::done_event}}};
}

}  // namespace

TEST_CASE("bench client: chunk times show the server's delays", "[bench_tool]") {
  fake::fake_sse_server server([](const fake::seen_request&) { return two_tokens(100, 200); });
  const auto records = run(config_for(server), 1);
  REQUIRE(records.size() == 1);
  const request_record& r = records[0];
  INFO(r.error);
  REQUIRE(r.success);
  REQUIRE(r.chunk_s.size() == 2);
  CHECK(r.chunk_s[0] - r.send_s >= 0.1);  // TTFT covers the server's first delay
  // The second chunk cannot arrive before the server wrote it, 100 + 200 ms after the request.
  CHECK(r.chunk_s[1] - r.send_s >= 0.3);
  // Each chunk is stamped when it arrives, not at the end: the 200 ms gap shows as one ITL
  // sample (less whatever the first chunk's handling was delayed by on a loaded machine).
  CHECK(r.chunk_s[1] - r.chunk_s[0] > 0.1);
  CHECK(r.chunk_s[1] - r.chunk_s[0] < 1.0);
  CHECK(r.end_s >= r.chunk_s[1]);
  CHECK(r.usage_seen);
  CHECK(r.prompt_tokens == 3);
  CHECK(r.completion_tokens == 2);
  CHECK(r.cached_tokens == 1);
  CHECK(r.generated_bytes == 3);

  const auto seen = server.requests();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].method == "POST");
  CHECK(seen[0].target == "/v1/completions");
  CHECK(seen[0].body["model"] == "tiny");
  CHECK(seen[0].body["prompt"] == nlohmann::json::array({1, 2, 3}));
  CHECK(seen[0].body["max_tokens"] == 2);
  CHECK(seen[0].body["stream"] == true);
  CHECK(seen[0].body["ignore_eos"] == true);
  CHECK(seen[0].authorization.empty());
}

TEST_CASE("bench client: max concurrency 2 is never exceeded", "[bench_tool]") {
  fake::fake_sse_server server([](const fake::seen_request&) { return two_tokens(30, 30); });
  const auto records = run(config_for(server), 8, 2);
  for (const request_record& r : records) CHECK(r.success);
  CHECK(server.requests().size() == 8);
  CHECK(server.max_in_flight() == 2);
  CHECK(compute_metrics(records, {99}).max_concurrent_requests <= 2);
}

TEST_CASE("bench client: without a limit every request is in flight at once", "[bench_tool]") {
  fake::fake_sse_server server([](const fake::seen_request&) { return two_tokens(300, 10); });
  const auto records = run(config_for(server), 6);
  for (const request_record& r : records) CHECK(r.success);
  CHECK(server.max_in_flight() == 6);
}

TEST_CASE("bench client: an HTTP error fails the request with the server's message",
          "[bench_tool]") {
  fake::fake_sse_server server([](const fake::seen_request&) {
    return fake::scripted_response{500, {{0, R"({"error":{"message":"engine died"}})"}}};
  });
  const auto records = run(config_for(server), 2);
  for (const request_record& r : records) {
    CHECK_FALSE(r.success);
    CHECK(r.error == "HTTP 500: engine died");
  }
  CHECK(compute_metrics(records, {99}).failed == 2);
}

TEST_CASE("bench client: a server closing mid-stream fails the request", "[bench_tool]") {
  fake::fake_sse_server server([](const fake::seen_request&) {
    fake::scripted_response s{200, {{0, fake::text_chunk("a")}}};
    s.cut_mid_stream = true;
    return s;
  });
  const auto records = run(config_for(server), 1);
  CHECK_FALSE(records[0].success);
  CHECK_THAT(records[0].error, Catch::Contains("closed the connection"));
  CHECK(records[0].chunk_s.size() == 1);
}

TEST_CASE("bench client: a stalled server fails by the deadline and the run ends", "[bench_tool]") {
  fake::fake_sse_server server([](const fake::seen_request&) {
    fake::scripted_response s{200, {{0, fake::text_chunk("a")}}};
    s.stall_ms = 60'000;
    return s;
  });
  const auto start = std::chrono::steady_clock::now();
  const auto records = run(config_for(server, 0.3), 3);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(took < 5);
  for (const request_record& r : records) {
    CHECK_FALSE(r.success);
    CHECK_THAT(r.error, Catch::StartsWith("timed out after 0.3 s"));
    CHECK(r.end_s - r.send_s >= 0.29);
  }
}

TEST_CASE("bench client: stream errors, a missing [DONE] and no chunk fail the request",
          "[bench_tool]") {
  fake::fake_sse_server server([](const fake::seen_request& r) {
    const int kind = r.body["max_tokens"].get<int>();
    if (kind == 1) {
      return fake::scripted_response{
          200,
          {{0, fake::text_chunk("a") + fake::sse({{"error", {{"message", "oom"}}}}) +
                   fake::done_event}}};
    }
    if (kind == 2) return fake::scripted_response{200, {{0, fake::text_chunk("a")}}};
    return fake::scripted_response{200, {{0, fake::usage_chunk(3, 0, 0) + fake::done_event}}};
  });
  auto reqs = requests(3);
  for (std::size_t i = 0; i < 3; ++i) reqs[i].output_len = static_cast<std::int64_t>(i + 1);
  const auto records = run_load(config_for(server), reqs, {0, 0, 0});
  CHECK(records[0].error == "stream error: oom");
  CHECK(records[1].error == "stream ended without [DONE]");
  CHECK(records[2].error == "no content chunk");
}

TEST_CASE("bench client: an unreachable server fails every request with the connect error",
          "[bench_tool]") {
  unsigned short port = 0;
  {
    // A port that was free a moment ago and has no listener now.
    fake::fake_sse_server gone([](const fake::seen_request&) { return two_tokens(0, 0); });
    port = gone.port();
  }
  load_config c;
  c.client.url = parse_base_url("http://127.0.0.1:" + std::to_string(port));
  c.client.timeout_s = 5;
  const auto records = run(c, 3);
  for (const request_record& r : records) {
    CHECK_FALSE(r.success);
    CHECK_THAT(r.error, Catch::StartsWith("connect:"));
  }
  std::string error;
  CHECK_FALSE(query_model_id(c.client.url, "", 5, error));
  CHECK_THAT(error, Catch::Contains("connect:"));
}

TEST_CASE("bench client: the chat endpoint, the API key and the model list", "[bench_tool]") {
  fake::fake_sse_server server([](const fake::seen_request& r) {
    if (r.method == "GET") {
      return fake::scripted_response{200, {{0, R"({"data":[{"id":"served-name"}]})"}}};
    }
    return fake::scripted_response{
        200,
        {{0, fake::sse({{"choices", {{{"delta", {{"role", "assistant"}}}}}}})},
         {0, fake::sse({{"choices", {{{"delta", {{"content", "hey"}}}}}}})},
         {0, fake::usage_chunk(3, 1, 0) + fake::done_event}}};
  });
  load_config c = config_for(server);
  c.client.endpoint = "/v1/chat/completions";
  c.client.api_key = "secret";
  const auto records = run(c, 1);
  INFO(records[0].error);
  CHECK(records[0].success);
  CHECK(records[0].generated_bytes == 3);
  CHECK(records[0].chunk_s.size() == 2);  // the role-only chunk counts, as in vLLM

  std::string error;
  CHECK(query_model_id(c.client.url, "secret", 5, error) == "served-name");
  const auto seen = server.requests();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].target == "/v1/chat/completions");
  CHECK(seen[0].body["messages"][0]["content"] == "1 2 3");
  CHECK(seen[0].authorization == "Bearer secret");
  CHECK(seen[1].target == "/v1/models");
}

TEST_CASE("bench client: a conversation's next turn is sent after the one before, with the "
          "conversation so far and the ids the server streamed; a failed turn fails the rest",
          "[bench_tool]") {
  // Each answer is two chunks carrying token ids; conversation 1's second turn gets a 500.
  fake::fake_sse_server server([](const fake::seen_request& r) {
    const auto& prompt = r.body["prompt"];
    const auto last = prompt.back().get<int>();
    if (last == 21) return fake::scripted_response{500, {{0, R"({"error":{"message":"no"}})"}}};
    auto chunk = [](std::vector<int> ids) {
      return fake::sse({{"choices", {{{"index", 0}, {"text", "x"}, {"token_ids", ids}}}}});
    };
    return fake::scripted_response{200,
                                   {{20, chunk({last * 10, last * 10 + 1})},
                                    {0, chunk({last * 10 + 2})},
                                    {0, fake::usage_chunk(3, 3, 0) + fake::done_event}}};
  });
  // Conversation 0: turns with messages {1}, {2}, {3}; conversation 1: {11}, {21}, {31}.
  std::vector<bench_request> reqs(6);
  const int message[6] = {1, 11, 2, 21, 3, 31};
  for (std::size_t i = 0; i < 6; ++i) {
    reqs[i].prompt_ids = {static_cast<token_id>(message[i])};
    reqs[i].input_len = 1;
    reqs[i].output_len = 3;
    reqs[i].group = static_cast<std::int64_t>(i % 2);
    reqs[i].turn = static_cast<std::int64_t>(i / 2);
    reqs[i].follows = i >= 2 ? static_cast<std::int64_t>(i - 2) : -1;
  }
  load_config c = config_for(server);
  c.client.body.return_token_ids = true;
  c.max_concurrency = 1;
  const auto records = run_load(c, reqs, std::vector<double>(6, 0.0));
  CHECK(records[0].success);
  CHECK(records[0].output_ids == std::vector<std::int64_t>{10, 11, 12});
  REQUIRE(records[2].success);
  CHECK(records[2].prompt_ids == std::vector<std::int64_t>{1, 10, 11, 12, 2});
  REQUIRE(records[4].success);
  CHECK(records[4].prompt_ids == std::vector<std::int64_t>{1, 10, 11, 12, 2, 20, 21, 22, 3});
  CHECK(records[1].success);
  CHECK_FALSE(records[3].success);  // the 500
  CHECK_FALSE(records[5].success);  // never sent: the turn before failed
  CHECK(records[5].error == "the turn before failed");
  const auto seen = server.requests();
  CHECK(seen.size() == 5);
  CHECK(server.max_in_flight() == 1);
  for (const auto& r : seen) CHECK(r.body["return_token_ids"] == true);
}

}  // namespace courier_test_tools_bench_client
