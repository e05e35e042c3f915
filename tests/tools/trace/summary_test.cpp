#include "tools/trace/summary.hpp"

#include <catch2/catch.hpp>
#include <sstream>

#include "tests/tools/trace/synthetic_trace.hpp"
#include "tools/trace/request_phases.hpp"
#include "tools/trace/stats.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_tools_trace_summary {

namespace {

using namespace courier::trace_tool;
namespace synth = courier::test::trace;

trace serving_trace() {
  std::istringstream in(synth::serving_trace_text());
  std::ostringstream warn;
  return read_trace(in, "serving.jsonl", warn);
}

const message_stats* find_stats(const std::vector<message_stats>& all, const std::string& actor,
                                const std::string& msg) {
  for (const auto& m : all) {
    if (m.actor == actor && m.msg == msg) return &m;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("courier-trace: percentiles are nearest-rank values of the data", "[tools]") {
  std::vector<std::int64_t> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  const distribution d = describe(v);
  CHECK(d.count == 100);
  CHECK(d.total == 5050);
  CHECK(d.mean == Approx(50.5));
  CHECK(d.p50 == 50);
  CHECK(d.p99 == 99);
  CHECK(d.max == 100);
  const std::vector<std::int64_t> four = {1, 2, 3, 4};
  CHECK(percentile(four, 50) == 2);
  CHECK(percentile(four, 99) == 4);
  CHECK(percentile(four, 0) == 1);
  std::vector<std::int64_t> none;
  CHECK(describe(none).count == 0);
}

TEST_CASE("courier-trace: histogram buckets cover every value exactly once", "[tools]") {
  std::vector<std::int64_t> rows = {1, 1, 2, 3, 3, 3, 16};
  const auto linear = linear_buckets(rows, 16);
  REQUIRE(linear.size() == 16);  // width 1: 1..16
  CHECK(linear[0].lo == 1);
  CHECK(linear[0].count == 2);
  CHECK(linear[2].count == 3);
  CHECK(linear[15].count == 1);
  CHECK(range_label(linear[0]) == "1");

  const auto wide = linear_buckets({0, 99, 100, 250}, 16);
  CHECK(wide.front().lo == 0);
  CHECK(wide.front().hi - wide.front().lo == 20);  // 251 / 16 -> nice width 20
  std::uint64_t total = 0;
  for (const bucket& b : wide) total += b.count;
  CHECK(total == 4);
  CHECK(range_label(wide.front()) == "0-19");

  const auto log = log_buckets({0, 1'500, 3'000, 7'000, 1'000'000});
  REQUIRE(log.size() >= 3);
  CHECK(log.front().lo == 0);
  total = 0;
  for (const bucket& b : log) {
    total += b.count;
    if (b.lo <= 3'000 && 3'000 < b.hi) CHECK(b.lo == 2'000);
    if (b.lo <= 7'000 && 7'000 < b.hi) CHECK(b.hi == 10'000);
  }
  CHECK(total == 5);
  CHECK(log.back().hi > 1'000'000);
  CHECK(nice_step(3.0) == 5.0);
  CHECK(nice_step(0.012) == Approx(0.02));
  CHECK(nice_step(100.0) == 100.0);
}

TEST_CASE("courier-trace: per-request queue, prefill and decode times are as constructed",
          "[tools]") {
  const trace t = serving_trace();
  const auto phases = compute_request_phases(t);
  const auto plans = synth::request_plans();
  REQUIRE(phases.size() == plans.size());
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const auto& plan = plans[i];
    const auto& got = phases[i];
    INFO("request " << plan.req);
    CHECK(got.req == plan.req);
    CHECK(got.submit_ns == synth::base_ns + plan.submit_us * synth::us);
    if (plan.prefill.empty()) {  // cancelled in the queue
      CHECK_FALSE(got.queue_ns());
      CHECK_FALSE(got.complete());
      CHECK(got.num_steps == 0);
      continue;
    }
    const int first = plan.prefill.front().first, last = plan.prefill.back().first;
    const std::int64_t prefill_end_us = synth::plan_sent_us(last) + synth::step_dur_us(last);
    CHECK(got.queue_ns() == (synth::plan_sent_us(first) - plan.submit_us) * synth::us);
    CHECK(got.prefill_ns() == (prefill_end_us - synth::plan_sent_us(first)) * synth::us);
    CHECK(got.num_steps == plan.prefill.size() + plan.decode_steps.size());
    if (plan.finish_after_result_us < 0) {
      CHECK_FALSE(got.decode_ns());
      continue;
    }
    const std::int64_t finish_us =
        synth::result_at_us(plan.decode_steps.back()) + plan.finish_after_result_us;
    CHECK(got.decode_ns() == (finish_us - prefill_end_us) * synth::us);
    CHECK(got.complete());
  }
  // Spelled out for request 1: submitted at 40 us, first row at 1000 us, last prefill step 1
  // ends at 3000 + 1550 us, finished at 11000 + 10 + 1750 + 20 + 10 us.
  CHECK(*phases[0].queue_ns() == 960 * synth::us);
  CHECK(*phases[0].prefill_ns() == 3550 * synth::us);
  CHECK(*phases[0].decode_ns() == 8240 * synth::us);
}

TEST_CASE("courier-trace: a row whose engine step was dropped ends its step at the row",
          "[tools]") {
  std::istringstream in(synth::header_line + "\n" +
                        R"({"actor":"scheduler","msg":"submit","ts":100,"dur":1,"tid":2,"req":9})"
                        "\n" +
                        R"({"actor":"scheduler","msg":"row","ts":400,"dur":0,"tid":2,"req":9,)"
                        R"("step":3,"prefill":10})"
                        "\n" +
                        R"({"actor":"scheduler","msg":"finish","ts":900,"dur":0,"tid":2,"req":9})"
                        "\n");
  std::ostringstream warn;
  const auto phases = compute_request_phases(read_trace(in, "t", warn));
  REQUIRE(phases.size() == 1);
  CHECK(phases[0].queue_ns() == 300);
  CHECK(phases[0].prefill_ns() == 0);
  CHECK(phases[0].decode_ns() == 500);
}

TEST_CASE("courier-trace: summary counts spans per actor and message", "[tools]") {
  const trace t = serving_trace();
  const auto stats = compute_message_stats(t);
  REQUIRE(stats.front().actor == "admission");
  const auto* step_plan = find_stats(stats, "engine", "step_plan");
  REQUIRE(step_plan);
  CHECK(step_plan->dur_ns.count == synth::num_steps);
  // Step durations 1500, 1550, ..., 1850 us: nearest-rank p50 is the 4th, p99 the 8th.
  CHECK(step_plan->dur_ns.p50 == synth::step_dur_us(3) * synth::us);
  CHECK(step_plan->dur_ns.p99 == synth::step_dur_us(7) * synth::us);
  CHECK(step_plan->dur_ns.max == synth::step_dur_us(7) * synth::us);
  std::int64_t total = 0;
  for (int k = 0; k < synth::num_steps; ++k) total += synth::step_dur_us(k) * synth::us;
  CHECK(step_plan->dur_ns.total == total);
  const auto* rows = find_stats(stats, "scheduler", "row");
  REQUIRE(rows);
  CHECK(rows->dur_ns.count == 2 + 4 + 1 + 2 + 2 + 4 + 1 + 3);  // prefill and decode rows
  CHECK(find_stats(stats, "scheduler", "cancel")->dur_ns.count == 1);
  CHECK(find_stats(stats, "telemetry", "report")->dur_ns.count == 5);
}

TEST_CASE("courier-trace: the summary text reports steps, requests and drops", "[tools]") {
  std::ostringstream out;
  write_summary(serving_trace(), out);
  const std::string text = out.str();
  CHECK_THAT(text, Catch::Contains("summary of serving.jsonl (model tiny-qwen3)"));
  CHECK_THAT(text, Catch::Contains("step_plan"));
  CHECK_THAT(text, Catch::Contains("count 8   step time p50 1.650 ms   p99 1.850 ms"));
  CHECK_THAT(text, Catch::Contains("batch size (rows per step)"));
  CHECK_THAT(text, Catch::Contains("tokens per step (prefill + decode)"));
  CHECK_THAT(text, Catch::Contains("count 5   complete 3   incomplete 2"));
  CHECK_THAT(text, Catch::Contains("1 never got a row"));
  CHECK_THAT(text, Catch::Contains("2 had no finish"));
  // Queue times of the four scheduled requests: 960, 2860, 4760, 8600 us.
  CHECK_THAT(text, Catch::Contains("queue                4       2.860       8.600       8.600"));
  CHECK_THAT(text, Catch::Contains("Dropped spans: 5"));
}

TEST_CASE("courier-trace: the summary of a trace without spans says so", "[tools]") {
  std::istringstream in(synth::header_line + "\n");
  std::ostringstream warn, out;
  write_summary(read_trace(in, "empty.jsonl", warn), out);
  CHECK_THAT(out.str(), Catch::Contains("no spans"));
}

TEST_CASE("courier-trace: a histogram draws bars to scale and merges empty buckets", "[tools]") {
  const std::vector<bucket> buckets = {{0, 10, 4}, {10, 20, 0}, {20, 30, 0}, {30, 40, 1}};
  const std::string text = render_histogram(buckets, range_label, "  ");
  CHECK(text == "  0-9    " + std::string(40, '#') + " 4\n" +      //
                    "  10-29  " + std::string(40, ' ') + " 0\n" +  //
                    "  30-39  " + std::string(10, '#') + std::string(30, ' ') + " 1\n");
}

}  // namespace courier_test_tools_trace_summary
