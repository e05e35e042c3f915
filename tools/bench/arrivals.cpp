#include "tools/bench/arrivals.hpp"

#include <cmath>
#include <random>

namespace courier::bench_tool {

std::vector<double> arrival_offsets_s(std::size_t num_requests, double rate_per_s,
                                      std::uint64_t seed) {
  std::vector<double> out(num_requests, 0.0);
  if (std::isinf(rate_per_s)) return out;
  // A different stream from the dataset's (which seeds with `seed` itself).
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
  std::exponential_distribution<double> gap(rate_per_s);
  for (std::size_t i = 1; i < num_requests; ++i) out[i] = out[i - 1] + gap(rng);
  return out;
}

}  // namespace courier::bench_tool
