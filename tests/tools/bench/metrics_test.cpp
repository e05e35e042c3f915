// courier-bench's metrics on hand-made request records: every expected value is worked out
// by hand from the records' times, in the comments.
#include <catch2/catch.hpp>

#include "tools/bench/metrics.hpp"
#include "tools/bench/sample_stats.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_tools_bench_metrics {

namespace {

using namespace courier::bench_tool;

request_record completed(double send, std::vector<double> chunks, double end, int prompt,
                         int completion, int cached) {
  request_record r;
  r.send_s = send;
  r.chunk_s = std::move(chunks);
  r.end_s = end;
  r.success = true;
  r.usage_seen = true;
  r.prompt_tokens = prompt;
  r.completion_tokens = completion;
  r.cached_tokens = cached;
  return r;
}

// r1: TTFT 100 ms, E2EL 300, 3 tokens in 3 chunks: TPOT (300-100)/2 = 100, ITL 50, 100.
// r2: TTFT 200, E2EL 400, 5 tokens in 2 chunks (speculative): TPOT (400-200)/4 = 50, ITL 100.
// r3: TTFT 400, E2EL 500, 1 token: no TPOT, no ITL.
// r4: failed, from 0.2 s to 2.0 s.
std::vector<request_record> scenario() {
  request_record failed;
  failed.send_s = 0.2;
  failed.end_s = 2.0;
  failed.error = "HTTP 500: boom";
  failed.client_input_len = 99;
  return {completed(0.0, {0.1, 0.15, 0.25}, 0.3, 10, 3, 4),
          completed(0.5, {0.7, 0.8}, 0.9, 20, 5, 0), completed(1.0, {1.4}, 1.5, 30, 1, 30), failed};
}

}  // namespace

TEST_CASE("bench stats: percentiles interpolate linearly between ranks as numpy's",
          "[bench_tool]") {
  // numpy.percentile([1, 2, 3, 4], 50) = 2.5; 99: rank 2.97 -> 3.97.
  CHECK(percentile_linear({1, 2, 3, 4}, 50) == Approx(2.5));
  CHECK(percentile_linear({1, 2, 3, 4}, 99) == Approx(3.97));
  // numpy.percentile([10, 7, 4, 3, 2, 1], 90): sorted rank 4.5 -> 7 + 0.5 * 3 = 8.5.
  const auto s = describe_sample({10, 7, 4, 3, 2, 1}, {90, 0, 100});
  CHECK(s.percentiles[0].second == Approx(8.5));
  CHECK(s.percentiles[1].second == 1);
  CHECK(s.percentiles[2].second == 10);
  CHECK(s.median == Approx(3.5));
  CHECK(s.mean == Approx(4.5));
  // Population deviation: squares 30.25+6.25+0.25+2.25+6.25+12.25 = 57.5; sqrt(57.5/6).
  CHECK(s.std_dev == Approx(3.0956959));
  const auto none = describe_sample({}, {99});
  CHECK(none.count == 0);
  CHECK(none.mean == 0);
  CHECK(none.percentiles.at(0).second == 0);
}

TEST_CASE("bench metrics: counts, throughputs and the cached share", "[bench_tool]") {
  const bench_metrics m = compute_metrics(scenario(), {99});
  CHECK(m.completed == 3);
  CHECK(m.failed == 1);
  CHECK(m.duration_s == Approx(2.0));  // first send 0.0 to last end 2.0 (the failed one)
  CHECK(m.total_input_tokens == 60);   // 10 + 20 + 30: the failed request's 99 do not count
  CHECK(m.total_output_tokens == 9);   // 3 + 5 + 1
  CHECK(m.request_throughput == Approx(1.5));
  CHECK(m.output_throughput == Approx(4.5));
  CHECK(m.total_token_throughput == Approx(34.5));
  CHECK(m.cached_tokens == 34);
  CHECK(m.cached_token_share == Approx(34.0 / 60.0));
  // In flight: r1 [0, 0.3], r4 [0.2, 2.0], r2 [0.5, 0.9], r3 [1.0, 1.5]: never more than 2.
  CHECK(m.max_concurrent_requests == 2);
  // Second 0: r1's 3 chunks (1 token each) + r2's 2 chunks (2.5 tokens each) = 8.
  CHECK(m.max_output_tokens_per_s == Approx(8.0));
}

TEST_CASE("bench metrics: TTFT, TPOT, ITL and E2EL over the completed requests", "[bench_tool]") {
  const bench_metrics m = compute_metrics(scenario(), {99, 50});
  // TTFT 100, 200, 400: mean 233.33; deviations -133.33, -33.33, 166.67 -> std 124.72;
  // p99 rank 1.98 -> 200 + 0.98 * 200 = 396.
  CHECK(m.ttft_ms.count == 3);
  CHECK(m.ttft_ms.mean == Approx(233.3333));
  CHECK(m.ttft_ms.median == Approx(200));
  CHECK(m.ttft_ms.std_dev == Approx(124.7219));
  CHECK(m.ttft_ms.percentiles.at(0).second == Approx(396));
  CHECK(m.ttft_ms.percentiles.at(1).second == Approx(200));
  // TPOT 100, 50: mean 75, std 25, p99 50 + 0.99 * 50 = 99.5.
  CHECK(m.tpot_ms.count == 2);
  CHECK(m.tpot_ms.mean == Approx(75));
  CHECK(m.tpot_ms.std_dev == Approx(25));
  CHECK(m.tpot_ms.percentiles.at(0).second == Approx(99.5));
  // ITL 50, 100, 100: mean 83.33, median 100, std sqrt(1666.67/3) = 23.57, p99 100.
  CHECK(m.itl_ms.count == 3);
  CHECK(m.itl_ms.mean == Approx(83.3333));
  CHECK(m.itl_ms.median == Approx(100));
  CHECK(m.itl_ms.std_dev == Approx(23.5702));
  CHECK(m.itl_ms.percentiles.at(0).second == Approx(100));
  // E2EL 300, 400, 500: mean 400, std sqrt(20000/3) = 81.65, p99 400 + 0.98 * 100 = 498.
  CHECK(m.e2el_ms.mean == Approx(400));
  CHECK(m.e2el_ms.std_dev == Approx(81.6497));
  CHECK(m.e2el_ms.percentiles.at(0).second == Approx(498));
}

TEST_CASE("bench metrics: without usage, the client's prompt length and the chunk count",
          "[bench_tool]") {
  request_record r;
  r.send_s = 0;
  r.chunk_s = {0.1, 0.2, 0.3, 0.4};
  r.end_s = 0.5;
  r.success = true;
  r.client_input_len = 7;
  const bench_metrics m = compute_metrics({r}, {99});
  CHECK(m.total_input_tokens == 7);
  CHECK(m.total_output_tokens == 4);
  CHECK(m.cached_tokens == 0);
  CHECK(m.tpot_ms.mean == Approx(400.0 / 3));  // (500 - 100) / (4 - 1)
  CHECK(tokens_per_chunk(r) == 1.0);
}

TEST_CASE("bench metrics: a run where every request failed has zero rates and latencies",
          "[bench_tool]") {
  request_record r;
  r.error = "connect: Connection refused";
  const bench_metrics m = compute_metrics({r, r}, {99});
  CHECK(m.completed == 0);
  CHECK(m.failed == 2);
  CHECK(m.duration_s == 0);
  CHECK(m.request_throughput == 0);
  CHECK(m.ttft_ms.mean == 0);
  CHECK(m.cached_token_share == 0);
  CHECK(m.max_concurrent_requests == 0);
}

}  // namespace courier_test_tools_bench_metrics
