#pragma once
// When each request is sent, as offsets from the start of the run. As vLLM: an infinite rate
// sends every request at once; a rate r gives a Poisson process (exponential gaps of mean 1/r,
// vLLM's gamma with burstiness 1), the first request at 0.
#include <cstdint>
#include <vector>

namespace courier::bench_tool {

// Non-decreasing offsets in seconds, one per request; the first is 0. Its own random stream
// from `seed`, so the arrivals do not change when the dataset's parameters do.
// Invariant: rate_per_s > 0 (infinity allowed).
std::vector<double> arrival_offsets_s(std::size_t num_requests, double rate_per_s,
                                      std::uint64_t seed);

}  // namespace courier::bench_tool
