#pragma once
// Writes drained spans to a trace file, one JSON object per line (the format courier-trace
// reads; see tools/trace/README.md). Owned by the telemetry actor.
#include <cstdio>
#include <string>
#include <vector>

#include "actors/telemetry/trace.hpp"

namespace courier::telemetry {

class trace_writer {
 public:
  // Creates or truncates path and writes the header line; std::runtime_error naming the config
  // key when it cannot.
  trace_writer(const std::string& path, double sample, const std::string& model_name);
  ~trace_writer();
  trace_writer(const trace_writer&) = delete;
  trace_writer& operator=(const trace_writer&) = delete;

  void write(const std::vector<span>& spans);
  // {"req":N,"request_id":"..."}: request N's HTTP id (x-request-id).
  void write_label(std::uint64_t request, const std::string& id);
  void write_dropped(std::uint64_t n);
  void flush();

 private:
  std::FILE* f_ = nullptr;  // Owned.
  std::string path_;
};

}  // namespace courier::telemetry
