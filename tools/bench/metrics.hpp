#pragma once
// The run's metrics from its request records, with vLLM's definitions (benchmark_serving's
// calculate_metrics), so that the numbers compare with `vllm bench serve` point by point:
//
//   completed / failed      requests that succeeded / did not
//   duration_s              first send to last end, over all requests
//   total_input_tokens      sum of input_tokens() of completed requests
//   total_output_tokens     sum of output_tokens() of completed requests
//   request_throughput      completed / duration;  output_throughput  total_output / duration
//   total_token_throughput  (total_input + total_output) / duration
//   ttft                    first content chunk - send, per completed request
//   tpot                    (e2el - ttft) / (output_tokens - 1), completed requests with > 1
//                           output token
//   itl                     every gap between consecutive content chunks of completed requests
//                           (a chunk carrying several tokens is one gap, as in vLLM)
//   e2el                    end - send, per completed request
//   cached_tokens           sum of usage's cached_tokens of completed requests;
//   cached_token_share      cached_tokens / total_input_tokens (0 when no input)
//   max_output_tokens_per_s the most output tokens in one 1-second bucket from the first send
//   max_concurrent_requests the most requests in flight at once (all sent requests)
//
// Failed requests count only in `failed` (and in duration and concurrency).
#include <cstdint>
#include <utility>
#include <vector>

#include "tools/bench/request_record.hpp"
#include "tools/bench/sample_stats.hpp"

namespace courier::bench_tool {

struct bench_metrics {
  std::int64_t completed = 0;
  std::int64_t failed = 0;
  double duration_s = 0;
  std::int64_t total_input_tokens = 0;
  std::int64_t total_output_tokens = 0;
  double request_throughput = 0;
  double output_throughput = 0;
  double total_token_throughput = 0;
  std::int64_t cached_tokens = 0;
  double cached_token_share = 0;
  double max_output_tokens_per_s = 0;
  std::int64_t max_concurrent_requests = 0;
  // In milliseconds.
  sample_stats ttft_ms;
  sample_stats tpot_ms;
  sample_stats itl_ms;
  sample_stats e2el_ms;
};

bench_metrics compute_metrics(const std::vector<request_record>& records,
                              const std::vector<double>& percentiles);

// The output tokens each content chunk of `r` stands for: output_tokens() spread evenly over
// its chunks (1 each when usage is absent); 0 without chunks.
double tokens_per_chunk(const request_record& r);

// The earliest send and latest end of all records; (0, 0) for none.
std::pair<double, double> run_span_s(const std::vector<request_record>& records);

}  // namespace courier::bench_tool
