#include "tools/trace/trace_file.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <sstream>

#include "tests/tools/trace/synthetic_trace.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_tools_trace_trace_file {

namespace {

using namespace courier::trace_tool;
namespace synth = courier::test::trace;

trace read_text(const std::string& text, std::string* warnings = nullptr) {
  std::istringstream in(text);
  std::ostringstream warn;
  trace t = read_trace(in, "t.jsonl", warn);
  if (warnings) *warnings = warn.str();
  return t;
}

std::string error_of(const std::string& text) {
  try {
    read_text(text);
  } catch (const trace_error& e) {
    return e.what();
  }
  return "";
}

const std::string span_line = R"({"actor":"engine","msg":"forward","ts":100,"dur":5,"tid":3})";

}  // namespace

TEST_CASE("courier-trace: reading keeps every span with its fields and sorts by start", "[tools]") {
  const trace t = read_text(synth::serving_trace_text());
  REQUIRE(t.spans.size() == synth::serving_spans().size());
  CHECK(t.header.model == "tiny-qwen3");
  CHECK(t.header.clock == "steady");
  CHECK(t.num_dropped == 5);
  CHECK(t.request_ids == std::map<std::int64_t, std::string>{{2, "agent-run-2"}});
  for (std::size_t i = 1; i < t.spans.size(); ++i) {
    CHECK(t.spans[i - 1].ts_ns <= t.spans[i].ts_ns);
  }
  // The first span is request 1's HTTP handler at base + 0.
  const span& first = t.spans.front();
  CHECK(t.name(first.actor) == "admission");
  CHECK(t.name(first.msg) == "http_request");
  CHECK(first.ts_ns == synth::base_ns);
  CHECK(first.dur_ns == 45 * synth::us);
  CHECK(first.tid == 1);
  CHECK(first.has(field::req));
  CHECK(first.req == 1);
  CHECK_FALSE(first.has(field::step));
  CHECK(format_fields(first) == "req=1");
}

TEST_CASE("courier-trace: a parent span sorts before a child that starts with it", "[tools]") {
  const trace t = read_text(synth::header_line + "\n" +
                            R"({"actor":"engine","msg":"forward","ts":100,"dur":5,"tid":3})"
                            "\n" +
                            R"({"actor":"engine","msg":"step_plan","ts":100,"dur":9,"tid":3})"
                            "\n");
  REQUIRE(t.spans.size() == 2);
  CHECK(t.name(t.spans[0].msg) == "step_plan");
  CHECK(t.name(t.spans[1].msg) == "forward");
}

TEST_CASE("courier-trace: a first line that is not the header is rejected on line 1", "[tools]") {
  CHECK_THAT(error_of(span_line + "\n"),
             Catch::Contains("t.jsonl:1:") && Catch::Contains("not a courier-trace file"));
  CHECK_THAT(error_of("hello\n"), Catch::Contains("t.jsonl:1:"));
  CHECK_THAT(error_of(R"({"format":"other","version":1})"
                      "\n"),
             Catch::Contains("not a courier-trace file"));
  CHECK_THAT(error_of(R"({"format":"courier-trace","version":2})"
                      "\n"),
             Catch::Contains("t.jsonl:1:") && Catch::Contains("version 2"));
  CHECK_THAT(error_of(R"({"format":"courier-trace"})"
                      "\n"),
             Catch::Contains("version"));
  CHECK_THAT(error_of(R"({"format":"courier-trace","version":1,"unit":"us"})"
                      "\n"),
             Catch::Contains("unit"));
  CHECK_THAT(error_of(""), Catch::Contains("t.jsonl: empty file"));
}

TEST_CASE("courier-trace: a malformed line is an error naming its line number", "[tools]") {
  const std::string head = synth::header_line + "\n" + span_line + "\n\n";
  CHECK_THAT(error_of(head + "{\"actor\":\n" + span_line + "\n"),
             Catch::Contains("t.jsonl:4:") && Catch::Contains("malformed JSON"));
  CHECK_THAT(error_of(head + "[1,2]\n"),
             Catch::Contains("t.jsonl:4:") && Catch::Contains("expected a JSON object"));
  CHECK_THAT(error_of(head + R"({"actor":"a","msg":"m","ts":1,"tid":1})"
                             "\n"),
             Catch::Contains("t.jsonl:4: missing 'dur'"));
  CHECK_THAT(error_of(head + R"({"actor":"a","msg":"m","ts":1.5,"dur":1,"tid":1})"
                             "\n"),
             Catch::Contains("'ts' must be an integer"));
  CHECK_THAT(error_of(head + R"({"actor":"a","msg":"m","ts":1,"dur":-1,"tid":1})"
                             "\n"),
             Catch::Contains("'dur' is out of range"));
  CHECK_THAT(error_of(head + R"({"actor":7,"msg":"m","ts":1,"dur":1,"tid":1})"
                             "\n"),
             Catch::Contains("'actor' must be a string"));
  CHECK_THAT(error_of(head + R"({"actor":"a","msg":"m","ts":1,"dur":1,"tid":1,"step":-2})"
                             "\n"),
             Catch::Contains("'step' is out of range"));
  CHECK_THAT(error_of(head + R"({"dropped":"many"})"
                             "\n"),
             Catch::Contains("'dropped' must be an integer"));
  CHECK_THAT(error_of(head + R"({"actor":"a","msg":"m","ts":1,"dur":1,"tid":1,"req":1e30})"
                             "\n"),
             Catch::Contains("t.jsonl:4:"));
}

TEST_CASE("courier-trace: a truncated last line is skipped with a warning", "[tools]") {
  std::string warnings;
  const std::string text =
      synth::header_line + "\n" + span_line + "\n" + R"({"actor":"engine","msg":"forw)";
  const trace t = read_text(text, &warnings);
  CHECK(t.spans.size() == 1);
  CHECK(t.num_skipped_lines == 1);
  CHECK_THAT(warnings, Catch::Contains("t.jsonl:3:") && Catch::Contains("truncated"));
  // The same line with its newline was written whole, so it is an error.
  CHECK_THAT(error_of(text + "\n"), Catch::Contains("t.jsonl:3:"));
  // A complete last line without a newline is read.
  CHECK(read_text(synth::header_line + "\n" + span_line).spans.size() == 1);
}

TEST_CASE("courier-trace: unknown fields, actors and messages are accepted", "[tools]") {
  const trace t = read_text(
      synth::header_line + "\r\n" +
      R"({"actor":"tokenizer","msg":"encode","ts":1,"dur":2,"tid":9,"extra":{"a":[1]},"req":0})"
      "\r\n");
  REQUIRE(t.spans.size() == 1);
  CHECK(t.name(t.spans[0].actor) == "tokenizer");
  CHECK(t.spans[0].has(field::req));  // present, even though 0
  CHECK(t.spans[0].req == 0);
}

TEST_CASE("courier-trace: random garbage lines never crash the reader", "[tools]") {
  std::mt19937 rng(1234);
  const auto valid = synth::serving_spans();
  const std::string alphabet = "{}[]\":,0123456789-.eEtruefalsnl \\abcxyz\x01\xff\xc3";
  for (int round = 0; round < 3000; ++round) {
    std::string line;
    switch (round % 3) {
      case 0: {  // random bytes
        const std::size_t n = rng() % 80;
        for (std::size_t i = 0; i < n; ++i) line += static_cast<char>(rng() % 256);
        break;
      }
      case 1: {  // a valid line with a few characters changed, inserted or removed
        line = valid[rng() % valid.size()].json_line();
        for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0 && !line.empty(); --edits) {
          const std::size_t at = rng() % line.size();
          const char c = alphabet[rng() % alphabet.size()];
          switch (rng() % 3) {
            case 0:
              line[at] = c;
              break;
            case 1:
              line.insert(line.begin() + static_cast<long>(at), c);
              break;
            default:
              line.erase(at, 1);
          }
        }
        break;
      }
      default: {  // symbols that look like JSON
        const std::size_t n = rng() % 40;
        for (std::size_t i = 0; i < n; ++i) line += alphabet[rng() % alphabet.size()];
      }
    }
    line.erase(std::remove(line.begin(), line.end(), '\n'), line.end());
    const std::string text = synth::header_line + "\n" + line + "\n" + span_line + "\n";
    try {
      const trace t = read_text(text);
      CHECK(t.spans.size() >= 1);
    } catch (const trace_error& e) {
      CHECK_THAT(std::string(e.what()), Catch::StartsWith("t.jsonl:2:"));
    }
  }
  // Deep nesting is not a stack overflow.
  CHECK_THAT(error_of(synth::header_line + "\n" + std::string(100000, '[') + "\n"),
             Catch::Contains("t.jsonl:2:"));
}

TEST_CASE("courier-trace: a trace file on disk reads like the same text", "[tools]") {
  synth::temp_dir dir;
  const std::string path = dir.file("serving.jsonl", synth::serving_trace_text());
  std::ostringstream warn;
  const trace t = read_trace_file(path, warn);
  CHECK(t.origin == path);
  CHECK(t.spans.size() == synth::serving_spans().size());
  CHECK(t.num_dropped == 5);
  CHECK(warn.str().empty());
}

TEST_CASE("courier-trace: a missing file is an error naming it", "[tools]") {
  std::ostringstream warn;
  CHECK_THROWS_WITH(read_trace_file("/nonexistent/t.jsonl", warn),
                    Catch::Contains("/nonexistent/t.jsonl: cannot open"));
  synth::temp_dir dir;
  CHECK_THROWS_WITH(read_trace_file(dir.path(""), warn), Catch::Contains("is a directory"));
}

TEST_CASE("courier-trace: actors are displayed in pipeline order, then by name", "[tools]") {
  const trace t = read_text(synth::header_line + "\n" +
                            R"({"actor":"zeta","msg":"m","ts":1,"dur":2,"tid":1})"
                            "\n" +
                            R"({"actor":"telemetry","msg":"report","ts":1,"dur":2,"tid":1})"
                            "\n" +
                            R"({"actor":"alpha","msg":"m","ts":1,"dur":2,"tid":1})"
                            "\n" +
                            R"({"actor":"engine","msg":"step_plan","ts":1,"dur":2,"tid":1})"
                            "\n" +
                            R"({"actor":"admission","msg":"finish","ts":1,"dur":2,"tid":1})"
                            "\n");
  std::vector<std::string> names;
  for (auto id : actors_in_display_order(t)) names.push_back(t.name(id));
  CHECK(names == std::vector<std::string>{"admission", "engine", "telemetry", "alpha", "zeta"});
}

}  // namespace courier_test_tools_trace_trace_file
