#include "tools/trace/request_timeline.hpp"

#include <catch2/catch.hpp>
#include <set>
#include <sstream>

#include "tests/tools/trace/synthetic_trace.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_tools_trace_request_timeline {

namespace {

using namespace courier::trace_tool;
namespace synth = courier::test::trace;

trace serving_trace() {
  std::istringstream in(synth::serving_trace_text());
  std::ostringstream warn;
  return read_trace(in, "serving.jsonl", warn);
}

}  // namespace

TEST_CASE("courier-trace: a request's timeline has its spans and its steps, in order", "[tools]") {
  const trace t = serving_trace();
  const auto lines = request_timeline(t, 2);  // prefill in step 1, decode in steps 2 and 3
  REQUIRE_FALSE(lines.empty());
  std::multiset<std::string> kinds;
  std::set<std::uint32_t> steps;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    const span& s = t.spans[lines[k]];
    if (k > 0) CHECK(t.spans[lines[k - 1]].ts_ns <= s.ts_ns);
    kinds.insert(t.name(s.actor) + "/" + t.name(s.msg));
    if (s.has(field::req)) {
      CHECK(s.req == 2);
    } else {
      steps.insert(s.step);
    }
  }
  CHECK(steps == std::set<std::uint32_t>{1, 2, 3});
  CHECK(kinds.count("admission/http_request") == 1);
  CHECK(kinds.count("scheduler/submit") == 1);
  CHECK(kinds.count("scheduler/row") == 3);
  CHECK(kinds.count("engine/step_plan") == 3);
  CHECK(kinds.count("scheduler/plan") == 3);
  CHECK(kinds.count("scheduler/step_result") == 3);
  CHECK(kinds.count("admission/token_event") == 2);
  CHECK(kinds.count("scheduler/finish") == 1);
  CHECK(kinds.count("admission/finish") == 1);
  CHECK(kinds.count("engine/forward") == 0);  // only the steps' outer spans
  CHECK(lines.size() == 1 + 1 + 3 + 3 + 3 + 3 + 2 + 1 + 1);
  // It starts with the HTTP request and ends with admission's finish.
  CHECK(t.name(t.spans[lines.front()].msg) == "http_request");
  CHECK(t.name(t.spans[lines.back()].actor) == "admission");
  CHECK(t.name(t.spans[lines.back()].msg) == "finish");
}

TEST_CASE("courier-trace: the request timeline prints times relative to its first line",
          "[tools]") {
  std::ostringstream out;
  write_request_timeline(serving_trace(), 2, out);
  const std::string text = out.str();
  CHECK_THAT(text, Catch::StartsWith("request 2 (x-request-id agent-run-2) in serving.jsonl: "));
  // http_request at 100 us; submit at 140 us, 5 us long.
  CHECK_THAT(text, Catch::Contains("       0.000  admission  http_request         45.000  req=2"));
  CHECK_THAT(text, Catch::Contains("       0.040  scheduler  submit                5.000  req=2"));
  // Step 1's plan was sent at 3000 us, 2.9 ms after the first line.
  CHECK_THAT(text, Catch::Contains("       2.900  scheduler  row                   0.000  "
                                   "req=2 step=1 prefill=300"));
}

TEST_CASE("courier-trace: an unknown request id is an error", "[tools]") {
  std::ostringstream out;
  CHECK(request_timeline(serving_trace(), 77).empty());
  CHECK_THROWS_WITH(write_request_timeline(serving_trace(), 77, out),
                    Catch::Contains("no span has req 77"));
}

}  // namespace courier_test_tools_trace_request_timeline
