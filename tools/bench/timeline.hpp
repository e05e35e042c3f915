#pragma once
// The run over time, in buckets, for the plot: output throughput, TTFT of the requests that
// completed in each bucket, and the median ITL. Its size is bounded whatever the run: at most
// max_buckets buckets and max_ttft_points single points.
#include <cstddef>
#include <utility>
#include <vector>

#include "tools/bench/request_record.hpp"

namespace courier::bench_tool {

inline constexpr std::size_t max_buckets = 300;
inline constexpr std::size_t max_ttft_points = 2000;

// 1 s for runs of 30 s to 300 s; a finer 1-2-5 width (12 to 30 buckets) for shorter runs and a
// coarser one (at most 300 buckets) for longer ones. Always > 0.
double bucket_width_s(double duration_s);

struct timeline {
  double t0_s = 0;        // the first send; bucket i covers [t0 + i*w, t0 + (i+1)*w)
  double duration_s = 0;  // first send to last end
  double bucket_s = 1;
  // Per bucket. Output tokens are placed at their chunks' arrival (tokens_per_chunk each).
  std::vector<double> output_tokens_per_s;
  // TTFT of the completed requests that ended in the bucket; NaN where none ended.
  std::vector<double> ttft_median_ms;
  std::vector<double> ttft_max_ms;
  // Median of the ITL gaps that ended in the bucket; NaN where none.
  std::vector<double> itl_median_ms;
  // (end time from t0 in s, TTFT in ms) of every completed request, when there are at most
  // max_ttft_points of them; empty otherwise (the per-bucket lines stand for them).
  std::vector<std::pair<double, double>> ttft_points;
};

timeline build_timeline(const std::vector<request_record>& records);

}  // namespace courier::bench_tool
