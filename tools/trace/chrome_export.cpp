#include "tools/trace/chrome_export.hpp"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

namespace courier::trace_tool {

namespace {

constexpr int pid = 1;

// Non-negative nanoseconds as microseconds with three decimals, digit for digit.
std::string micros(std::int64_t ns) {
  return fmt::format("{}.{:03}", ns / 1000, ns % 1000);
}

// Replaces invalid UTF-8 (possible in a file name) instead of throwing.
std::string quoted(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string thread_names_event(std::uint32_t tid, const std::string& name) {
  return fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})",
                     pid, tid, quoted(name));
}

}  // namespace

void write_chrome_trace(const trace& t, std::ostream& out) {
  // The thread name lists every actor seen on that thread, in display order.
  const auto order = actors_in_display_order(t);
  std::map<std::uint32_t, std::set<std::uint16_t>> actors_by_tid;
  for (const span& s : t.spans) actors_by_tid[s.tid].insert(s.actor);

  std::vector<std::string> names;  // JSON-quoted, by name id
  for (const std::string& n : t.names) names.push_back(quoted(n));

  const std::string process =
      t.header.model.empty() ? "courier" : fmt::format("courier ({})", t.header.model);
  out << "{\"traceEvents\":[\n";
  out << fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})",
                     pid, quoted(process));
  for (const auto& [tid, actors] : actors_by_tid) {
    std::string name;
    for (std::uint16_t a : order) {
      if (!actors.count(a)) continue;
      if (!name.empty()) name += '+';
      name += t.name(a);
    }
    out << ",\n" << thread_names_event(tid, name);
  }
  const std::int64_t t0 = t.begin_ns();
  std::string line;  // reused per event
  for (const span& s : t.spans) {
    line.clear();
    fmt::format_to(
        std::back_inserter(line),
        R"(,{}{{"name":{},"cat":{},"ph":"X","ts":{},"dur":{},"pid":{},"tid":{},"args":{{)", '\n',
        names[s.msg], names[s.actor], micros(s.ts_ns - t0), micros(s.dur_ns), pid, s.tid);
    bool first = true;
    for (field f : all_fields) {
      if (!s.has(f)) continue;
      fmt::format_to(std::back_inserter(line), R"({}"{}":{})", first ? "" : ",", field_name(f),
                     s.get(f));
      first = false;
    }
    line += "}}";
    out << line;
  }
  nlohmann::json other = {{"source", t.origin},
                          {"model", t.header.model},
                          {"clock", t.header.clock},
                          {"sample", t.header.sample},
                          {"dropped_spans", t.num_dropped}};
  out << "\n],\"displayTimeUnit\":\"ms\",\"otherData\":"
      << other.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "}\n";
}

}  // namespace courier::trace_tool
