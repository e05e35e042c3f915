// courier-bench's arrival times: all at once for an infinite rate, Poisson otherwise.
#include <catch2/catch.hpp>
#include <limits>

#include "tools/bench/arrivals.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_tools_bench_arrivals {

using courier::bench_tool::arrival_offsets_s;

TEST_CASE("bench arrivals: an infinite rate sends every request at 0", "[bench_tool]") {
  const auto t = arrival_offsets_s(100, std::numeric_limits<double>::infinity(), 1);
  REQUIRE(t.size() == 100);
  for (const double x : t) CHECK(x == 0.0);
}

TEST_CASE("bench arrivals: rate r gives gaps of mean 1/r", "[bench_tool]") {
  const double rate = 50;
  const auto t = arrival_offsets_s(20001, rate, 4);
  REQUIRE(t.size() == 20001);
  CHECK(t[0] == 0.0);
  for (std::size_t i = 1; i < t.size(); ++i) REQUIRE(t[i] >= t[i - 1]);
  const double mean_gap = t.back() / 20000;
  CHECK(mean_gap == Approx(1 / rate).epsilon(0.03));
}

TEST_CASE("bench arrivals: the same seed gives the same times, another seed others",
          "[bench_tool]") {
  CHECK(arrival_offsets_s(50, 10, 1) == arrival_offsets_s(50, 10, 1));
  CHECK(arrival_offsets_s(50, 10, 1) != arrival_offsets_s(50, 10, 2));
}

}  // namespace courier_test_tools_bench_arrivals
