#pragma once
// `courier-trace FILE summary`: span statistics per (actor, msg), engine step statistics with
// text histograms, per-request queue/prefill/decode times, and the dropped-span total.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "tools/trace/stats.hpp"
#include "tools/trace/trace_file.hpp"

namespace courier::trace_tool {

struct message_stats {
  std::string actor;
  std::string msg;
  distribution dur_ns;
};

// Per (actor, msg), actors in display order and messages by name.
std::vector<message_stats> compute_message_stats(const trace& t);

// Writes the whole plain-text summary.
void write_summary(const trace& t, std::ostream& out);

}  // namespace courier::trace_tool
