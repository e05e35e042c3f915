#pragma once
// Small statistics for the summary and the plot: nearest-rank percentiles, 1-2-5 "nice" steps,
// and histograms with linear or 1-2-5 logarithmic buckets.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace courier::trace_tool {

// Nearest-rank percentile of sorted values: the smallest value with at least p% of the values
// at or below it (p in [0, 100]). Always one of the values, never an interpolation, so tests
// can state it exactly. Undefined for an empty vector.
std::int64_t percentile(const std::vector<std::int64_t>& sorted, double p);

struct distribution {
  std::size_t count = 0;
  std::int64_t total = 0;
  double mean = 0;
  std::int64_t p50 = 0;
  std::int64_t p99 = 0;
  std::int64_t max = 0;
};

// Sorts `values` in place and describes them; all zero for an empty vector.
distribution describe(std::vector<std::int64_t>& values);

// The smallest of 1, 2, 5 x 10^k that is >= raw (raw > 0).
double nice_step(double raw);

struct bucket {
  std::int64_t lo = 0;  // inclusive
  std::int64_t hi = 0;  // exclusive
  std::uint64_t count = 0;
};

// Buckets of one nice integer width covering min..max, at most about `max_buckets` of them.
std::vector<bucket> linear_buckets(const std::vector<std::int64_t>& values,
                                   std::size_t max_buckets);
// Buckets with 1-2-5 edges (1, 2, 5, 10, 20, ...) covering min..max: for durations, which
// spread over decades.
std::vector<bucket> log_buckets(const std::vector<std::int64_t>& values);

// One line per bucket: label, a bar of '#' scaled to the largest count, the count. Adjacent
// empty buckets share one line.
std::string render_histogram(const std::vector<bucket>& buckets,
                             const std::function<std::string(const bucket&)>& label,
                             const std::string& indent);

// "1.5 ms" style labels for a bucket of nanoseconds, and "8-15" for integer buckets.
std::string duration_label(std::int64_t ns);
std::string range_label(const bucket& b);

}  // namespace courier::trace_tool
