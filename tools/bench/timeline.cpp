#include "tools/bench/timeline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tools/bench/metrics.hpp"
#include "tools/bench/sample_stats.hpp"
#include "tools/trace/stats.hpp"

namespace courier::bench_tool {
namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double min_buckets = 30;

double median_of(std::vector<double>& v) {
  if (v.empty()) return nan;
  std::sort(v.begin(), v.end());
  return percentile_linear(v, 50);
}

}  // namespace

double bucket_width_s(double duration_s) {
  if (!(duration_s > 0)) return 1;
  if (duration_s < min_buckets) return trace_tool::nice_step(duration_s / min_buckets);
  if (duration_s > static_cast<double>(max_buckets)) {
    return trace_tool::nice_step(duration_s / static_cast<double>(max_buckets));
  }
  return 1;
}

timeline build_timeline(const std::vector<request_record>& records) {
  timeline t;
  const auto [first, last] = run_span_s(records);
  t.t0_s = first;
  t.duration_s = last - first;
  t.bucket_s = bucket_width_s(t.duration_s);
  // nice_step rounds up, so duration / width <= max_buckets; +1 for an end on the last edge.
  const auto n = static_cast<std::size_t>(std::floor(t.duration_s / t.bucket_s)) + 1;
  const auto bucket = [&](double s) {
    const double i = std::floor((s - t.t0_s) / t.bucket_s);
    return std::min(n - 1, static_cast<std::size_t>(std::max(0.0, i)));
  };

  t.output_tokens_per_s.assign(n, 0.0);
  std::vector<std::vector<double>> ttft(n), itl(n);
  std::size_t completed = 0;
  for (const request_record& r : records) {
    if (!r.success) continue;
    ++completed;
    const double each = tokens_per_chunk(r);
    for (std::size_t i = 0; i < r.chunk_s.size(); ++i) {
      const std::size_t b = bucket(r.chunk_s[i]);
      t.output_tokens_per_s[b] += each / t.bucket_s;
      if (i > 0) itl[b].push_back((r.chunk_s[i] - r.chunk_s[i - 1]) * 1e3);
    }
    ttft[bucket(r.end_s)].push_back((r.chunk_s.front() - r.send_s) * 1e3);
  }
  for (std::size_t b = 0; b < n; ++b) {
    t.itl_median_ms.push_back(median_of(itl[b]));
    t.ttft_max_ms.push_back(ttft[b].empty() ? nan
                                            : *std::max_element(ttft[b].begin(), ttft[b].end()));
    t.ttft_median_ms.push_back(median_of(ttft[b]));
  }
  if (completed <= max_ttft_points) {
    for (const request_record& r : records) {
      if (r.success)
        t.ttft_points.emplace_back(r.end_s - t.t0_s, (r.chunk_s.front() - r.send_s) * 1e3);
    }
  }
  return t;
}

}  // namespace courier::bench_tool
