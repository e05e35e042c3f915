// Runs the courier-trace binary: argument forms, exit statuses and output files.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/run_command.hpp"
#include "tests/tools/trace/synthetic_trace.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_tools_trace_cli {

namespace {

namespace synth = courier::test::trace;
using courier::test::run_command;

std::string binary() {
  return COURIER_TRACE_BINARY;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("courier-trace: the binary accepts the file before or after the command", "[tools]") {
  synth::temp_dir dir;
  const std::string file = dir.file("serving.jsonl", synth::serving_trace_text());
  const auto a = run_command(binary() + " " + file + " summary");
  const auto b = run_command(binary() + " summary " + file);
  CHECK(a.status == 0);
  CHECK(a.out == b.out);
  CHECK_THAT(a.out, Catch::Contains("complete 3"));

  const auto r = run_command(binary() + " " + file + " request 3");
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("request 3 in"));
  // A request found by the HTTP id (x-request-id) the trace records for it.
  const auto by_http_id = run_command(binary() + " " + file + " request agent-run-2");
  CHECK(by_http_id.status == 0);
  CHECK_THAT(by_http_id.out, Catch::StartsWith("request 2 (x-request-id agent-run-2) in"));
}

TEST_CASE("courier-trace: the binary writes chrome JSON and SVG files", "[tools]") {
  synth::temp_dir dir;
  const std::string file = dir.file("serving.jsonl", synth::serving_trace_text());
  REQUIRE(run_command(binary() + " " + file + " export --chrome " + dir.path("t.json")).status ==
          0);
  CHECK_NOTHROW(nlohmann::json::parse(slurp(dir.path("t.json"))));
  REQUIRE(run_command(binary() + " " + file + " plot " + dir.path("t.svg")).status == 0);
  CHECK_THAT(slurp(dir.path("t.svg")), Catch::StartsWith("<svg"));
}

TEST_CASE("courier-trace: the binary exits 2 on bad usage and 1 on a bad file", "[tools]") {
  synth::temp_dir dir;
  const std::string file = dir.file("serving.jsonl", synth::serving_trace_text());
  const auto help = run_command(binary() + " --help");
  CHECK(help.status == 0);
  CHECK_THAT(help.out, Catch::Contains("usage: courier-trace FILE COMMAND"));
  CHECK(run_command(binary()).status == 2);
  CHECK(run_command(binary() + " " + file + " frobnicate").status == 2);
  CHECK(run_command(binary() + " " + file + " request").status == 2);
  CHECK(run_command(binary() + " " + file + " request abc").status == 2);
  CHECK(run_command(binary() + " " + file + " export --perfetto x.json").status == 2);

  const auto missing = run_command(binary() + " " + dir.path("none.jsonl") + " summary");
  CHECK(missing.status == 1);
  CHECK_THAT(missing.err, Catch::Contains("none.jsonl: cannot open"));
  const std::string bad = dir.file("bad.jsonl", synth::header_line + "\n{oops\n");
  const auto malformed = run_command(binary() + " " + bad + " summary");
  CHECK(malformed.status == 1);
  CHECK_THAT(malformed.err, Catch::Contains("bad.jsonl:2:"));
  const auto unknown = run_command(binary() + " " + file + " request 12345");
  CHECK(unknown.status == 1);
  CHECK_THAT(unknown.err, Catch::Contains("no span has req 12345"));
}

}  // namespace courier_test_tools_trace_cli
