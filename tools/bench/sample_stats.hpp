#pragma once
// Mean, median, standard deviation and percentiles of a sample, defined as numpy defines them
// (vLLM computes its metrics with numpy): the population standard deviation (ddof = 0) and
// percentiles by linear interpolation between closest ranks (numpy's default "linear":
// rank = p/100 * (n-1), then x[floor] + (x[ceil] - x[floor]) * fraction).
#include <cstddef>
#include <utility>
#include <vector>

namespace courier::bench_tool {

// `sorted` ascending and non-empty; p in [0, 100].
double percentile_linear(const std::vector<double>& sorted, double p);

struct sample_stats {
  std::size_t count = 0;
  double mean = 0;
  double median = 0;
  double std_dev = 0;
  std::vector<std::pair<double, double>> percentiles;  // (p, value), in the order asked
};

// All zero for an empty sample (vLLM's np.mean(x or 0)), with the percentiles still listed.
sample_stats describe_sample(std::vector<double> values, const std::vector<double>& percentiles);

}  // namespace courier::bench_tool
