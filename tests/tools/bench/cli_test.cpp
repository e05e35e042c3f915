// Runs the courier-bench binary: its summary, result file and plot against a scripted server,
// and its exit statuses.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/run_command.hpp"
#include "tests/tools/bench/fake_sse_server.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_tools_bench_cli {

namespace {

namespace fake = courier::test::bench;
using courier::test::run_command;

std::string binary() {
#ifdef COURIER_BENCH_BINARY
  return COURIER_BENCH_BINARY;
#else
  // Built next to courier-trace, in the build folder's root.
  const std::string trace = COURIER_TRACE_BINARY;
  return trace.substr(0, trace.rfind('/') + 1) + "courier-bench";
#endif
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string temp_path(const std::string& name) {
  return "/tmp/courier_bench_cli_" + std::to_string(::getpid()) + "_" + name;
}

fake::scripted_response answer(const fake::seen_request& r) {
  if (r.method == "GET") return {200, {{0, R"({"data":[{"id":"tiny-model"}]})"}}};
  return {
      200,
      {{0, fake::text_chunk("x")},
       {5, fake::text_chunk("y")},
       {0, fake::usage_chunk(static_cast<int>(r.body["prompt"].size()), 2, 0) + fake::done_event}}};
}

}  // namespace

TEST_CASE("bench cli: a run prints vLLM's summary and writes the result file and plot",
          "[bench_tool]") {
  fake::fake_sse_server server(answer);
  const std::string json_path = temp_path("result.json");
  const std::string svg_path = temp_path("plot.svg");
  const auto r = run_command(binary() + " --base-url " + server.base_url() +
                             " --vocab-size 1000 --num-prompts 6 --random-input-len 20"
                             " --random-output-len 2 --max-concurrency 3 --request-rate 200"
                             " --result-json " +
                             json_path + " --plot " + svg_path);
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("============ Serving Benchmark Result ============"));
  CHECK_THAT(r.out, Catch::Contains("Successful requests:                     6"));
  CHECK_THAT(r.out, Catch::Contains("Total input tokens:                      120"));
  CHECK_THAT(r.out, Catch::Contains("P99 ITL (ms):"));

  const auto j = nlohmann::json::parse(slurp(json_path));
  CHECK(j["model_id"] == "tiny-model");  // asked GET /v1/models
  CHECK(j["completed"] == 6);
  CHECK(j["failed"] == 0);
  CHECK(j["total_output_tokens"] == 12);
  CHECK(j["max_concurrency"] == 3);
  CHECK(j["request_rate"] == 200.0);
  CHECK(j["input_lens"].size() == 6);
  CHECK(j["itls"][0].size() == 1);
  CHECK(j.contains("p99_ttft_ms"));
  CHECK(server.max_in_flight() <= 3);
  CHECK_THAT(slurp(svg_path), Catch::StartsWith("<svg"));
  std::remove(json_path.c_str());
  std::remove(svg_path.c_str());
}

TEST_CASE("bench cli: exit 2 on a bad flag, 1 when requests fail, 0 for help", "[bench_tool]") {
  const auto help = run_command(binary() + " --help");
  CHECK(help.status == 0);
  CHECK_THAT(help.out, Catch::Contains("usage: courier-bench"));

  const auto bad = run_command(binary() + " --vocab-size 10 --num-prompts many");
  CHECK(bad.status == 2);
  CHECK_THAT(bad.err, Catch::Contains("--num-prompts"));

  unsigned short port = 0;
  {
    fake::fake_sse_server gone(answer);
    port = gone.port();
  }
  const auto down = run_command(binary() + " --base-url http://127.0.0.1:" + std::to_string(port) +
                                " --model m --vocab-size 10 --num-prompts 3 --random-input-len 4");
  CHECK(down.status == 1);
  CHECK_THAT(down.out, Catch::Contains("Failed requests:                         3"));
  CHECK_THAT(down.out, Catch::Contains("connect:"));

  const auto no_model = run_command(
      binary() + " --base-url http://127.0.0.1:" + std::to_string(port) + " --vocab-size 10");
  CHECK(no_model.status == 1);
  CHECK_THAT(no_model.err, Catch::Contains("/v1/models"));
}

}  // namespace courier_test_tools_bench_cli
