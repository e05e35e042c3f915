#include "actors/scheduler/scheduler_actor.hpp"

namespace courier::actors {

namespace {

using self_ptr = scheduler_actor::stateful_pointer<scheduler_state>;

void deliver(std::vector<outgoing_event>& events) {
  for (outgoing_event& e : events) {
    if (e.to) caf::anon_send(e.to, std::move(e.event));  // reply_to is dynamically typed
  }
  events.clear();
}

// Sends steps while there is work and room in flight (one step, or two with overlap: the
// engine then finds step N + 1 in its mailbox when it finishes step N).
void maybe_step(self_ptr self) {
  auto& st = self->state;
  for (;;) {
    std::vector<outgoing_event> events;
    telemetry::scoped_span span("scheduler", "plan");
    std::optional<msg::step_plan> plan = st.core->plan(events);
    deliver(events);
    if (!plan) {
      span.cancel();  // nothing to do is not worth a span
      return;
    }
    if (span.active()) {
      span->step = plan->step;
      span->rows = static_cast<std::int32_t>(plan->rows.size());
      st.core->in_flight_mix(span->prefill, span->decode);
    }
    self->send(st.engine, std::move(*plan));
  }
}

// Everything a handler does ends here: the next step to the engine first, then the metrics
// report, then the events (so a client that has its answer finds it counted in /metrics).
void after(self_ptr self, std::vector<outgoing_event>& events) {
  maybe_step(self);
  auto& st = self->state;
  if (st.telemetry) {
    if (auto report = st.core->take_report()) self->send(st.telemetry, std::move(*report));
  }
  deliver(events);
}

}  // namespace

scheduler_actor::behavior_type scheduler_fn(self_ptr self, engine_actor engine,
                                            scheduler_options opts, msg::engine_ready ready,
                                            telemetry_actor telemetry) {
  self->state.core = std::make_unique<scheduler_core>(std::move(opts), ready);
  self->state.engine = std::move(engine);
  self->state.telemetry = std::move(telemetry);
  return {
      [self](msg::submit& s) {
        telemetry::scoped_span span("scheduler", "submit", s.id);
        std::vector<outgoing_event> events;
        self->state.core->submit(std::move(s), events);
        after(self, events);
      },
      [self](msg::cancel c) {
        telemetry::scoped_span span("scheduler", "cancel", c.id);
        std::vector<outgoing_event> events;
        self->state.core->cancel(c.id, events);
        after(self, events);
      },
      [self](msg::step_result& r) {
        telemetry::scoped_span span("scheduler", "step_result", 0, r.step);
        if (span.active()) span->rows = static_cast<std::int32_t>(r.rows.size());
        std::vector<outgoing_event> events;
        self->state.core->on_result(std::move(r), events);
        after(self, events);
      },
      [self](msg::stats_atom) {
        telemetry::scoped_span span("scheduler", "stats");
        return self->state.core->stats();
      },
      [self](msg::drain_atom) {
        telemetry::scoped_span span("scheduler", "drain");
        self->state.core->evict_all_cached();
        return self->state.core->stats();
      },
  };
}

}  // namespace courier::actors
