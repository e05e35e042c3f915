#include "tools/trace/chrome_export.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "tests/tools/trace/synthetic_trace.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_tools_trace_chrome_export {

namespace {

using namespace courier::trace_tool;
namespace synth = courier::test::trace;
using nlohmann::json;

trace serving_trace() {
  std::istringstream in(synth::serving_trace_text());
  std::ostringstream warn;
  return read_trace(in, "serving.jsonl", warn);
}

json export_json(const trace& t) {
  std::ostringstream out;
  write_chrome_trace(t, out);
  return json::parse(out.str());  // throws, failing the test, on invalid JSON
}

// Microseconds with three decimals back to integer nanoseconds.
std::int64_t ns_of(const json& us) {
  return std::llround(us.get<double>() * 1000.0);
}

}  // namespace

TEST_CASE("courier-trace: chrome export is valid JSON with exact times", "[tools]") {
  const trace t = serving_trace();
  const json doc = export_json(t);
  CHECK(doc["displayTimeUnit"] == "ms");
  CHECK(doc["otherData"]["dropped_spans"] == 5);
  std::size_t num_x = 0;
  std::map<std::string, std::size_t> by_name;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++num_x;
    ++by_name[e["cat"].get<std::string>() + "/" + e["name"].get<std::string>()];
    CHECK(e["pid"] == 1);
  }
  CHECK(num_x == t.spans.size());
  CHECK(by_name["engine/step_plan"] == synth::num_steps);
  // Every span of the input appears with its exact start and duration.
  std::multiset<std::tuple<std::string, std::int64_t, std::int64_t, std::uint32_t>> want, got;
  for (const auto& s : synth::serving_spans()) {
    want.emplace(s.actor + "/" + s.msg, s.ts_ns - synth::base_ns, s.dur_ns, s.tid);
  }
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    got.emplace(e["cat"].get<std::string>() + "/" + e["name"].get<std::string>(), ns_of(e["ts"]),
                ns_of(e["dur"]), e["tid"].get<std::uint32_t>());
  }
  CHECK(got == want);
}

TEST_CASE("courier-trace: chrome export writes three-decimal microseconds digit for digit",
          "[tools]") {
  std::istringstream in(synth::header_line + "\n" +
                        R"({"actor":"engine","msg":"step_plan","ts":1000,"dur":7,"tid":3})"
                        "\n" +
                        R"({"actor":"engine","msg":"forward","ts":1234567891,"dur":1001,)"
                        R"("tid":3,"step":4,"rows":2})"
                        "\n");
  std::ostringstream warn, out;
  write_chrome_trace(read_trace(in, "t", warn), out);
  CHECK_THAT(out.str(), Catch::Contains(R"("ts":0.000,"dur":0.007,)"));
  CHECK_THAT(out.str(), Catch::Contains(R"("ts":1234566.891,"dur":1.001,)"));
  CHECK_THAT(out.str(), Catch::Contains(R"("args":{"step":4,"rows":2})"));
}

TEST_CASE("courier-trace: chrome export keeps nested spans nested", "[tools]") {
  const json doc = export_json(serving_trace());
  std::map<std::uint32_t, std::vector<std::pair<std::int64_t, std::int64_t>>> by_tid;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const std::int64_t ts = ns_of(e["ts"]);
    by_tid[e["tid"].get<std::uint32_t>()].emplace_back(ts, ts + ns_of(e["dur"]));
  }
  std::size_t num_nested = 0;
  for (const auto& [tid, spans] : by_tid) {
    for (std::size_t i = 0; i < spans.size(); ++i) {
      for (std::size_t j = i + 1; j < spans.size(); ++j) {
        const auto [a0, a1] = spans[i];
        const auto [b0, b1] = spans[j];
        const bool disjoint = a1 <= b0 || b1 <= a0;
        const bool a_in_b = b0 <= a0 && a1 <= b1;
        const bool b_in_a = a0 <= b0 && b1 <= a1;
        INFO("tid " << tid << ": [" << a0 << ", " << a1 << ") and [" << b0 << ", " << b1 << ")");
        CHECK((disjoint || a_in_b || b_in_a));
        if (!disjoint && a1 > a0 && b1 > b0) ++num_nested;
      }
    }
  }
  CHECK(num_nested >= 2 * synth::num_steps);  // forward and sample inside each step_plan
}

TEST_CASE("courier-trace: chrome export names each thread after its actors", "[tools]") {
  const json doc = export_json(serving_trace());
  std::map<int, std::string> names;
  bool has_process = false;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "M") continue;
    if (e["name"] == "process_name") {
      has_process = true;
      CHECK(e["args"]["name"] == "courier (tiny-qwen3)");
    }
    if (e["name"] == "thread_name") names[e["tid"].get<int>()] = e["args"]["name"];
  }
  CHECK(has_process);
  CHECK(names ==
        std::map<int, std::string>{
            {1, "admission+telemetry"}, {2, "scheduler"}, {3, "engine"}, {4, "admission"}});
}

}  // namespace courier_test_tools_trace_chrome_export
