#pragma once
// `courier-trace FILE plot OUT.svg`: a self-contained SVG (any browser shows it) with a time
// axis in ms, one lane per actor with its spans coloured by message type, a legend, and bar
// charts of each engine step's rows and prefill/decode tokens on the same time axis.
//
// The output size is bounded whatever the trace's: spans are painted into pixel columns (see
// svg_lanes.hpp), so a trace of a million spans still gives an SVG of well under a few MB.
#include <iosfwd>

#include "tools/trace/trace_file.hpp"

namespace courier::trace_tool {

void write_svg_plot(const trace& t, std::ostream& out);

}  // namespace courier::trace_tool
