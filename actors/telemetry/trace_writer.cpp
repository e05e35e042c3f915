#include "actors/telemetry/trace_writer.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace courier::telemetry {

trace_writer::trace_writer(const std::string& path, double sample, const std::string& model_name)
    : path_(path) {
  f_ = std::fopen(path.c_str(), "w");
  if (!f_) {
    throw std::runtime_error(
        fmt::format("telemetry.trace.path: cannot write {}: {}", path, std::strerror(errno)));
  }
  const nlohmann::json header = {{"format", "courier-trace"}, {"version", 1},
                                 {"clock", "steady"},         {"unit", "ns"},
                                 {"sample", sample},          {"model", model_name}};
  const std::string line = header.dump() + "\n";
  std::fwrite(line.data(), 1, line.size(), f_);
}

trace_writer::~trace_writer() {
  if (f_) std::fclose(f_);
}

void trace_writer::write(const std::vector<span>& spans) {
  fmt::memory_buffer buf;
  for (const span& s : spans) {
    // actor and message are static identifiers of ours: no escaping needed.
    fmt::format_to(std::back_inserter(buf), R"({{"actor":"{}","msg":"{}","ts":{},"dur":{},"tid":{})",
                   s.actor, s.message, s.start_ns, s.duration_ns, s.thread);
    auto field = [&](const char* name, auto v) {
      if (v != 0) fmt::format_to(std::back_inserter(buf), R"(,"{}":{})", name, v);
    };
    field("req", s.request);
    field("step", s.step);
    field("rows", s.rows);
    field("prefill", s.prefill);
    field("decode", s.decode);
    field("drafts", s.drafts);
    field("accepted", s.accepted);
    buf.append(std::string_view("}\n"));
  }
  std::fwrite(buf.data(), 1, buf.size(), f_);
}

void trace_writer::write_label(std::uint64_t request, const std::string& id) {
  const std::string line =
      nlohmann::json{{"req", request}, {"request_id", id}}.dump(
          -1, ' ', false, nlohmann::json::error_handler_t::replace) +
      "\n";
  std::fwrite(line.data(), 1, line.size(), f_);
}

void trace_writer::write_dropped(std::uint64_t n) {
  if (n) std::fprintf(f_, "{\"dropped\":%llu}\n", static_cast<unsigned long long>(n));
}

void trace_writer::flush() { std::fflush(f_); }

}  // namespace courier::telemetry
