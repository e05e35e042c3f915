#pragma once
// `courier-trace FILE request ID`: one request's life across the actors. It lists every span
// with req == ID and, for each step in which the request had a scheduler "row", that step's
// engine "step_plan" and scheduler "plan"/"step_result" spans, in ts order.
#include <cstdint>
#include <iosfwd>
#include <vector>

#include "tools/trace/trace_file.hpp"

namespace courier::trace_tool {

// Indexes into t.spans, in ts order; empty when no span carries req == id.
std::vector<std::size_t> request_timeline(const trace& t, std::int64_t id);

// One line per span: time since the first line (ms), actor, msg, duration (us), fields.
// Throws trace_error when the id is not in the trace.
void write_request_timeline(const trace& t, std::int64_t id, std::ostream& out);

}  // namespace courier::trace_tool
