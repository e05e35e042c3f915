#include "tools/trace/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace courier::trace_tool {

std::int64_t percentile(const std::vector<std::int64_t>& sorted, double p) {
  const auto n = static_cast<double>(sorted.size());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * n));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

distribution describe(std::vector<std::int64_t>& values) {
  distribution d;
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  d.count = values.size();
  for (std::int64_t v : values) {
    // Saturates rather than overflowing on absurd inputs (a fuzzed file, say).
    if (__builtin_add_overflow(d.total, v, &d.total)) {
      d.total = v < 0 ? std::numeric_limits<std::int64_t>::min()
                      : std::numeric_limits<std::int64_t>::max();
    }
  }
  d.mean = static_cast<double>(d.total) / static_cast<double>(d.count);
  d.p50 = percentile(values, 50);
  d.p99 = percentile(values, 99);
  d.max = values.back();
  return d;
}

double nice_step(double raw) {
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * decade >= raw * (1 - 1e-9)) return m * decade;
  }
  return 10 * decade;
}

std::vector<bucket> linear_buckets(const std::vector<std::int64_t>& values,
                                   std::size_t max_buckets) {
  if (values.empty()) return {};
  const auto [lo_it, hi_it] = std::minmax_element(values.begin(), values.end());
  const std::int64_t lo = *lo_it, hi = *hi_it;
  const double raw = static_cast<double>(hi - lo + 1) / static_cast<double>(max_buckets);
  const auto width = std::max<std::int64_t>(1, static_cast<std::int64_t>(nice_step(raw)));
  // Floor division, so negative values land in the right bucket too.
  const std::int64_t first = (lo >= 0 ? lo / width : (lo - width + 1) / width) * width;
  std::vector<bucket> out;
  for (std::int64_t b = first; b <= hi; b += width) out.push_back({b, b + width, 0});
  for (std::int64_t v : values) ++out[static_cast<std::size_t>((v - first) / width)].count;
  return out;
}

std::vector<bucket> log_buckets(const std::vector<std::int64_t>& values) {
  if (values.empty()) return {};
  const auto [lo_it, hi_it] = std::minmax_element(values.begin(), values.end());
  const std::int64_t lo = std::max<std::int64_t>(*lo_it, 1), hi = *hi_it;
  // Edges 1, 2, 5, 10, ...: start at the largest edge <= lo, stop past hi.
  std::vector<std::int64_t> edges;
  for (std::int64_t decade = 1;; decade *= 10) {
    for (std::int64_t m : {1, 2, 5}) {
      const std::int64_t e = m * decade;
      if (e <= lo) {
        edges.assign(1, e);
      } else {
        edges.push_back(e);
        if (e > hi) break;
      }
    }
    if (edges.back() > hi || decade > std::int64_t{1} << 58) break;
  }
  std::vector<bucket> out;
  for (std::size_t i = 0; i + 1 < edges.size(); ++i) out.push_back({edges[i], edges[i + 1], 0});
  if (out.empty()) out.push_back({edges[0], hi + 1, 0});
  out.front().lo = std::min(out.front().lo, *lo_it);  // zero and negative values go first
  for (std::int64_t v : values) {
    auto it = std::upper_bound(edges.begin(), edges.end(), v);
    const std::size_t i =
        it == edges.begin() ? 0 : static_cast<std::size_t>(it - edges.begin()) - 1;
    ++out[std::min(i, out.size() - 1)].count;
  }
  return out;
}

std::string render_histogram(const std::vector<bucket>& buckets,
                             const std::function<std::string(const bucket&)>& label,
                             const std::string& indent) {
  constexpr std::uint64_t bar_width = 40;
  // A run of empty buckets (between outliers, say) reads better as one line.
  std::vector<bucket> merged;
  for (const bucket& b : buckets) {
    if (b.count == 0 && !merged.empty() && merged.back().count == 0) {
      merged.back().hi = b.hi;
    } else {
      merged.push_back(b);
    }
  }
  std::uint64_t most = 0;
  std::size_t label_width = 0;
  std::vector<std::string> labels;
  for (const bucket& b : merged) {
    most = std::max(most, b.count);
    labels.push_back(label(b));
    label_width = std::max(label_width, labels.back().size());
  }
  std::string out;
  for (std::size_t i = 0; i < merged.size(); ++i) {
    const std::uint64_t c = merged[i].count;
    // A non-empty bucket always shows at least one '#', so rare outliers stay visible.
    const std::uint64_t len = c == 0 ? 0 : std::max<std::uint64_t>(1, c * bar_width / most);
    out += fmt::format("{}{:<{}}  {:<{}} {}\n", indent, labels[i], label_width,
                       std::string(len, '#'), bar_width, c);
  }
  return out;
}

std::string duration_label(std::int64_t ns) {
  const auto abs = std::llabs(ns);
  if (abs >= 1'000'000'000) return fmt::format("{:g} s", static_cast<double>(ns) / 1e9);
  if (abs >= 1'000'000) return fmt::format("{:g} ms", static_cast<double>(ns) / 1e6);
  if (abs >= 1'000) return fmt::format("{:g} us", static_cast<double>(ns) / 1e3);
  return fmt::format("{} ns", ns);
}

std::string range_label(const bucket& b) {
  if (b.hi - b.lo == 1) return fmt::format("{}", b.lo);
  return fmt::format("{}-{}", b.lo, b.hi - 1);
}

}  // namespace courier::trace_tool
