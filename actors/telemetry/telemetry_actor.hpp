#pragma once
// The telemetry actor: aggregates the scheduler's reports into Prometheus metrics, answers
// scrapes (GET /metrics), and, when a trace file is configured, drains every thread's trace
// buffer into it every flush interval and once more when it exits.
#include <caf/all.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "actors/telemetry/metrics.hpp"
#include "actors/telemetry/telemetry_handle.hpp"
#include "actors/telemetry/trace.hpp"
#include "actors/telemetry/trace_writer.hpp"
#include "messages/type_ids.hpp"

namespace courier::actors {

struct telemetry_options {
  std::string model_name;
  bool metrics = true;
  std::shared_ptr<telemetry::trace_writer> trace;  // null: tracing off
  double trace_sample = 1.0;
  std::chrono::milliseconds flush_interval{100};
  std::size_t max_buffered_spans = std::size_t{1} << 20;
};

struct telemetry_state {
  static inline const char* name = "telemetry";
  std::unique_ptr<telemetry::server_metrics> metrics;  // null when off
  std::shared_ptr<telemetry::trace_writer> trace;
  std::chrono::milliseconds flush_interval{100};
  std::vector<telemetry::span> buffer;
  // Traced requests' HTTP ids, written with the spans at the next drain: at most
  // max_buffered_spans, the rest dropped and counted with the spans.
  std::vector<msg::request_label> labels;
  std::size_t max_labels = 0;
  std::uint64_t dropped_labels = 0;
  std::size_t drain_trace();  // returns the spans written
  ~telemetry_state();  // the last drain: spans recorded until the actor exits are kept
};

telemetry_actor::behavior_type telemetry_fn(
    telemetry_actor::stateful_pointer<telemetry_state> self, telemetry_options opts);

}  // namespace courier::actors
