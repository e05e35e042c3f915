#include "tools/bench/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace courier::bench_tool {
namespace {

std::int64_t peak_concurrency(const std::vector<request_record>& records) {
  std::vector<std::pair<double, int>> edges;
  for (const request_record& r : records) {
    if (r.end_s <= r.send_s) continue;  // never sent (unresolved host) or zero-length
    edges.emplace_back(r.send_s, +1);
    edges.emplace_back(r.end_s, -1);
  }
  std::sort(edges.begin(), edges.end());  // at equal times an end (-1) sorts first
  std::int64_t now = 0;
  std::int64_t peak = 0;
  for (const auto& e : edges) peak = std::max(peak, now += e.second);
  return peak;
}

double peak_tokens_per_second(const std::vector<request_record>& records, double t0) {
  std::map<std::int64_t, double> per_second;
  for (const request_record& r : records) {
    if (!r.success) continue;
    const double each = tokens_per_chunk(r);
    for (const double t : r.chunk_s) {
      per_second[static_cast<std::int64_t>(std::floor(t - t0))] += each;
    }
  }
  double peak = 0;
  for (const auto& [second, tokens] : per_second) peak = std::max(peak, tokens);
  return peak;
}

}  // namespace

double tokens_per_chunk(const request_record& r) {
  if (r.chunk_s.empty()) return 0;
  return static_cast<double>(r.output_tokens()) / static_cast<double>(r.chunk_s.size());
}

std::pair<double, double> run_span_s(const std::vector<request_record>& records) {
  if (records.empty()) return {0, 0};
  double first = records.front().send_s;
  double last = records.front().end_s;
  for (const request_record& r : records) {
    first = std::min(first, r.send_s);
    last = std::max(last, r.end_s);
  }
  return {first, last};
}

bench_metrics compute_metrics(const std::vector<request_record>& records,
                              const std::vector<double>& percentiles) {
  bench_metrics m;
  std::vector<double> ttft, tpot, itl, e2el;
  for (const request_record& r : records) {
    if (!r.success) {
      ++m.failed;
      continue;
    }
    ++m.completed;
    const std::int64_t out = r.output_tokens();
    m.total_input_tokens += r.input_tokens();
    m.total_output_tokens += out;
    m.cached_tokens += r.cached_tokens;
    const double first = r.chunk_s.front() - r.send_s;
    const double latency = r.end_s - r.send_s;
    ttft.push_back(first * 1e3);
    e2el.push_back(latency * 1e3);
    if (out > 1) tpot.push_back((latency - first) / static_cast<double>(out - 1) * 1e3);
    for (std::size_t i = 1; i < r.chunk_s.size(); ++i) {
      itl.push_back((r.chunk_s[i] - r.chunk_s[i - 1]) * 1e3);
    }
  }
  const auto [first_send, last_end] = run_span_s(records);
  m.duration_s = last_end - first_send;
  if (m.duration_s > 0) {
    m.request_throughput = static_cast<double>(m.completed) / m.duration_s;
    m.output_throughput = static_cast<double>(m.total_output_tokens) / m.duration_s;
    m.total_token_throughput =
        static_cast<double>(m.total_input_tokens + m.total_output_tokens) / m.duration_s;
  }
  if (m.total_input_tokens > 0) {
    m.cached_token_share =
        static_cast<double>(m.cached_tokens) / static_cast<double>(m.total_input_tokens);
  }
  m.max_output_tokens_per_s = peak_tokens_per_second(records, first_send);
  m.max_concurrent_requests = peak_concurrency(records);
  m.ttft_ms = describe_sample(std::move(ttft), percentiles);
  m.tpot_ms = describe_sample(std::move(tpot), percentiles);
  m.itl_ms = describe_sample(std::move(itl), percentiles);
  m.e2el_ms = describe_sample(std::move(e2el), percentiles);
  return m;
}

}  // namespace courier::bench_tool
