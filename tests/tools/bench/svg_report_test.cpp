// courier-bench's timeline and SVG plot: bucket widths, hand-checked buckets, and an SVG that
// is well-formed and small whatever the run's size.
#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "tools/bench/svg_report.hpp"
#include "tools/bench/timeline.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_tools_bench_svg_report {

namespace {

using namespace courier::bench_tool;

// True when every tag is closed in order (self-closing tags count as closed). Text is escaped,
// so every '<' starts a tag.
bool tags_balanced(const std::string& svg) {
  std::vector<std::string> open;
  for (std::size_t i = svg.find('<'); i != std::string::npos; i = svg.find('<', i + 1)) {
    const std::size_t end = svg.find('>', i);
    if (end == std::string::npos) return false;
    const std::string tag = svg.substr(i + 1, end - i - 1);
    if (tag.empty()) return false;
    if (tag.back() == '/') continue;
    if (tag.front() == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return false;
      open.pop_back();
    } else {
      open.push_back(tag.substr(0, tag.find(' ')));
    }
  }
  return open.empty();
}

request_record ok(double send, std::vector<double> chunks, double end, int tokens) {
  request_record r;
  r.send_s = send;
  r.chunk_s = std::move(chunks);
  r.end_s = end;
  r.success = true;
  r.usage_seen = true;
  r.completion_tokens = tokens;
  return r;
}

}  // namespace

TEST_CASE("bench timeline: 1-second buckets, finer for short runs, coarser for long ones",
          "[bench_tool]") {
  CHECK(bucket_width_s(100) == 1);
  CHECK(bucket_width_s(30) == 1);
  CHECK(bucket_width_s(300) == 1);
  CHECK(bucket_width_s(3) == Approx(0.1));     // 3 / 30 = 0.1
  CHECK(bucket_width_s(10) == Approx(0.5));    // 10 / 30 = 0.33 -> 0.5
  CHECK(bucket_width_s(10000) == Approx(50));  // 10000 / 300 = 33.3 -> 50
  CHECK(bucket_width_s(0) == 1);
}

TEST_CASE("bench timeline: tokens, TTFT and ITL land in the buckets of their times",
          "[bench_tool]") {
  // Run from 0 to 3 s: buckets of 0.1 s. Request a: 2 tokens in chunks at 0.12 and 0.18, ends
  // 0.19; request b: 4 tokens in 2 chunks at 0.32 and 0.36 (2 tokens each), ends 3.0.
  const auto t = build_timeline({ok(0.0, {0.12, 0.18}, 0.19, 2), ok(0.3, {0.32, 0.36}, 3.0, 4)});
  CHECK(t.bucket_s == Approx(0.1));
  REQUIRE(t.output_tokens_per_s.size() == 31);
  CHECK(t.output_tokens_per_s[1] == Approx(20));  // 2 tokens in 0.1 s
  CHECK(t.output_tokens_per_s[3] == Approx(40));  // 4 tokens in 0.1 s
  CHECK(t.output_tokens_per_s[2] == 0);
  CHECK(t.itl_median_ms[1] == Approx(60));
  CHECK(t.itl_median_ms[3] == Approx(40));
  CHECK(std::isnan(t.itl_median_ms[0]));
  CHECK(t.ttft_max_ms[1] == Approx(120));  // a ended at 0.19
  CHECK(t.ttft_max_ms[30] == Approx(20));  // b ended at 3.0: the last bucket
  REQUIRE(t.ttft_points.size() == 2);
  CHECK(t.ttft_points[1].first == Approx(3.0));
}

TEST_CASE("bench svg: a small run gives a well-formed SVG", "[bench_tool]") {
  std::ostringstream out;
  write_svg_report(out, build_timeline({ok(0.0, {0.1, 0.2}, 0.3, 2)}), "t <&> \"x\"");
  const std::string svg = out.str();
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(tags_balanced(svg));
  CHECK(svg.find("t &lt;&amp;&gt; &#34;x&#34;") != std::string::npos);
}

TEST_CASE("bench svg: the size stays bounded for 100k requests", "[bench_tool]") {
  std::vector<request_record> records;
  records.reserve(100000);
  for (int i = 0; i < 100000; ++i) {
    const double send = i * 0.036;  // an hour of requests
    records.push_back(ok(send, {send + 0.5, send + 0.55, send + 0.6}, send + 0.61, 3));
  }
  records[17].success = false;
  records[17].chunk_s.clear();
  std::ostringstream out;
  write_svg_report(out, build_timeline(records), "big");
  const std::string svg = out.str();
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(tags_balanced(svg));
  CHECK(svg.size() < 200 * 1000);
  // Too many requests for dots: the per-bucket lines stand in for them.
  CHECK(svg.find("<circle") == std::string::npos);
}

TEST_CASE("bench svg: an empty or all-failed run still gives a well-formed SVG", "[bench_tool]") {
  request_record failed;
  failed.error = "x";
  for (const auto& records : {std::vector<request_record>{}, std::vector<request_record>{failed}}) {
    std::ostringstream out;
    write_svg_report(out, build_timeline(records), "none");
    CHECK(tags_balanced(out.str()));
  }
}

}  // namespace courier_test_tools_bench_svg_report
