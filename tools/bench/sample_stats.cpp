#include "tools/bench/sample_stats.hpp"

#include <algorithm>
#include <cmath>

namespace courier::bench_tool {

double percentile_linear(const std::vector<double>& sorted, double p) {
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - static_cast<double>(lo));
}

sample_stats describe_sample(std::vector<double> values, const std::vector<double>& percentiles) {
  sample_stats s;
  s.count = values.size();
  for (const double p : percentiles) s.percentiles.emplace_back(p, 0.0);
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (const double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  double squares = 0;
  for (const double v : values) squares += (v - s.mean) * (v - s.mean);
  s.std_dev = std::sqrt(squares / static_cast<double>(values.size()));
  s.median = percentile_linear(values, 50);
  for (auto& [p, v] : s.percentiles) v = percentile_linear(values, p);
  return s;
}

}  // namespace courier::bench_tool
