#pragma once
// `courier-trace FILE export --chrome OUT.json`: the trace in Chrome's trace-event format, which
// chrome://tracing and ui.perfetto.dev open. Each span is a complete ("X") event on its thread;
// metadata events name the process and each thread after the actors seen on it.
#include <iosfwd>

#include "tools/trace/trace_file.hpp"

namespace courier::trace_tool {

// Streams the JSON, so a trace with millions of spans never exists twice in memory. ts and dur
// are microseconds written with exactly three decimals from integer nanoseconds (ts relative to
// the earliest span): no rounding, so spans nested on a thread stay nested.
void write_chrome_trace(const trace& t, std::ostream& out);

}  // namespace courier::trace_tool
