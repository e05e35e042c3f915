#include "tools/trace/request_timeline.hpp"

#include <fmt/format.h>

#include <ostream>
#include <unordered_set>

namespace courier::trace_tool {

std::vector<std::size_t> request_timeline(const trace& t, std::int64_t id) {
  const span_kind row = t.kind("scheduler", "row");
  const span_kind step_kinds[] = {t.kind("engine", "step_plan"), t.kind("scheduler", "plan"),
                                  t.kind("scheduler", "step_result")};
  std::unordered_set<std::uint32_t> steps;
  bool found = false;
  for (const span& s : t.spans) {
    if (!s.has(field::req) || s.req != id) continue;
    found = true;
    if (row.matches(s)) steps.insert(s.step);  // absent means step 0
  }
  std::vector<std::size_t> out;
  if (!found) return out;
  for (std::size_t i = 0; i < t.spans.size(); ++i) {
    const span& s = t.spans[i];
    bool keep = s.has(field::req) && s.req == id;
    if (!keep && steps.count(s.step)) {
      for (const span_kind& k : step_kinds) keep = keep || k.matches(s);
    }
    if (keep) out.push_back(i);
  }
  return out;
}

void write_request_timeline(const trace& t, std::int64_t id, std::ostream& out) {
  const auto lines = request_timeline(t, id);
  if (lines.empty()) throw trace_error(fmt::format("{}: no span has req {}", t.origin, id));
  const std::int64_t t0 = t.spans[lines.front()].ts_ns;
  const auto label = t.request_ids.find(id);
  const std::string http_id =
      label == t.request_ids.end() ? "" : " (x-request-id " + label->second + ")";
  out << fmt::format("request {}{} in {}: {} spans; times in ms from the first, durations in us\n",
                     id, http_id, t.origin, lines.size());
  out << fmt::format("{:>12}  {:<10} {:<14} {:>12}  {}\n", "at_ms", "actor", "message", "dur_us",
                     "fields");
  for (std::size_t i : lines) {
    const span& s = t.spans[i];
    out << fmt::format("{:>12.3f}  {:<10} {:<14} {:>12.3f}  {}\n",
                       static_cast<double>(s.ts_ns - t0) / 1e6, t.name(s.actor), t.name(s.msg),
                       static_cast<double>(s.dur_ns) / 1e3, format_fields(s));
  }
}

}  // namespace courier::trace_tool
