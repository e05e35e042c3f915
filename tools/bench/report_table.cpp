#include "tools/bench/report_table.hpp"

#include <fmt/format.h>

#include <cmath>
#include <ostream>

namespace courier::bench_tool {
namespace {

void row(std::ostream& out, const std::string& name, const std::string& value) {
  out << fmt::format("{:<40} {:<10}\n", name, value);
}
void row(std::ostream& out, const std::string& name, std::int64_t value) {
  row(out, name, std::to_string(value));
}
void row(std::ostream& out, const std::string& name, double value) {
  row(out, name, fmt::format("{:.2f}", value));
}

void latency_section(std::ostream& out, const std::string& header, const std::string& name,
                     const sample_stats& s) {
  out << fmt::format("{:-^50}\n", header);
  row(out, fmt::format("Mean {} (ms):", name), s.mean);
  row(out, fmt::format("Median {} (ms):", name), s.median);
  for (const auto& [p, v] : s.percentiles) {
    row(out, fmt::format("P{} {} (ms):", percentile_word(p), name), v);
  }
}

}  // namespace

std::string percentile_word(double p) {
  if (p == std::floor(p)) return fmt::format("{}", static_cast<std::int64_t>(p));
  return fmt::format("{}", p);
}

void write_report_table(std::ostream& out, const run_info& info, const bench_metrics& m) {
  out << fmt::format("{:=^50}\n", " Serving Benchmark Result ");
  row(out, "Successful requests:", m.completed);
  row(out, "Failed requests:", m.failed);
  if (info.max_concurrency > 0) row(out, "Maximum request concurrency:", info.max_concurrency);
  row(out, "Request rate configured (RPS):",
      std::isinf(info.request_rate) ? std::string("inf")
                                    : fmt::format("{:.2f}", info.request_rate));
  row(out, "Benchmark duration (s):", m.duration_s);
  row(out, "Total input tokens:", m.total_input_tokens);
  row(out, "Total generated tokens:", m.total_output_tokens);
  row(out, "Request throughput (req/s):", m.request_throughput);
  row(out, "Output token throughput (tok/s):", m.output_throughput);
  row(out, "Peak output token throughput (tok/s):", m.max_output_tokens_per_s);
  row(out, "Peak concurrent requests:", m.max_concurrent_requests);
  row(out, "Total Token throughput (tok/s):", m.total_token_throughput);
  latency_section(out, "Time to First Token", "TTFT", m.ttft_ms);
  latency_section(out, "Time per Output Token (excl. 1st token)", "TPOT", m.tpot_ms);
  latency_section(out, "Inter-token Latency", "ITL", m.itl_ms);
  latency_section(out, "End-to-end Latency", "E2EL", m.e2el_ms);
  out << fmt::format("{:-^50}\n", "Prefix Cache");
  row(out, "Cached prompt tokens:", m.cached_tokens);
  row(out, "Cached token share (%):", m.cached_token_share * 100);
  out << std::string(50, '=') << '\n';
}

}  // namespace courier::bench_tool
