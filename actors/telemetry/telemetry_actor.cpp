#include "actors/telemetry/telemetry_actor.hpp"

#include <cstdio>

namespace courier::actors {

std::size_t telemetry_state::drain_trace() {
  if (!trace) return 0;
  constexpr std::size_t chunk = 65536;
  std::size_t total = 0;
  while (const std::size_t n = telemetry::drain(buffer, chunk)) {
    trace->write(buffer);
    buffer.clear();
    total += n;
  }
  for (const msg::request_label& l : labels) trace->write_label(l.request, l.id);
  labels.clear();
  trace->write_dropped(telemetry::take_dropped() + dropped_labels);
  dropped_labels = 0;
  trace->flush();
  return total;
}

telemetry_state::~telemetry_state() {
  if (!trace) return;
  telemetry::stop_tracing();
  drain_trace();
}

telemetry_actor::behavior_type telemetry_fn(
    telemetry_actor::stateful_pointer<telemetry_state> self, telemetry_options opts) {
  auto& st = self->state;
  if (opts.metrics) st.metrics = std::make_unique<telemetry::server_metrics>(opts.model_name);
  st.trace = std::move(opts.trace);
  st.flush_interval = opts.flush_interval;
  st.max_labels = opts.max_buffered_spans;
  if (st.trace) {
    telemetry::start_tracing(opts.trace_sample, opts.max_buffered_spans);
    self->delayed_send(self, st.flush_interval, msg::flush_atom_v);
  }
  return {
      [self](const msg::telemetry_report& r) {
        telemetry::scoped_span span("telemetry", "report");
        if (self->state.metrics) self->state.metrics->apply(r);
      },
      [self](const msg::admission_report& r) {
        if (!self->state.metrics) return;
        for (const std::string& field : self->state.metrics->count_ignored_fields(r)) {
          std::fprintf(stderr,
                       "courier: ignoring the request field '%s' (not supported; counted in "
                       "courier:request_ignored_fields_total, logged once)\n",
                       field.c_str());
        }
      },
      [self](msg::request_label& l) {
        auto& st = self->state;
        if (!st.trace) return;
        if (st.labels.size() < st.max_labels) {
          st.labels.push_back(std::move(l));
        } else {
          ++st.dropped_labels;
        }
      },
      [self](msg::scrape_atom) {
        telemetry::scoped_span span("telemetry", "scrape");
        return self->state.metrics ? self->state.metrics->render() : std::string();
      },
      [self](msg::flush_atom) {
        {
          telemetry::scoped_span span("telemetry", "flush");
          if (self->state.drain_trace() == 0) span.cancel();  // idle: no span
        }
        self->delayed_send(self, self->state.flush_interval, msg::flush_atom_v);
      },
  };
}

}  // namespace courier::actors
