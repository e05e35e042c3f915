#pragma once
// The human summary on stdout, laid out as vLLM's "Serving Benchmark Result" block (same
// labels, 40-column names, two decimals), with a prefix-cache section added at the end.
#include <iosfwd>
#include <string>

#include "tools/bench/metrics.hpp"
#include "tools/bench/run_info.hpp"

namespace courier::bench_tool {

void write_report_table(std::ostream& out, const run_info& info, const bench_metrics& m);

// "99" for 99.0, "99.9" otherwise: vLLM's p_word, used in labels and JSON keys.
std::string percentile_word(double p);

}  // namespace courier::bench_tool
