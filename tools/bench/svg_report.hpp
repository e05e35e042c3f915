#pragma once
// --plot OUT.svg: a self-contained SVG of the run over time (seconds from the first send):
// output token throughput per bucket, TTFT of each request at its completion (dots up to
// max_ttft_points completed requests, with per-bucket median and max lines), and the median
// ITL per bucket. Bounded size whatever the run (see timeline.hpp): under 1 MB.
#include <iosfwd>
#include <string>

#include "tools/bench/timeline.hpp"

namespace courier::bench_tool {

void write_svg_report(std::ostream& out, const timeline& t, const std::string& title);

}  // namespace courier::bench_tool
