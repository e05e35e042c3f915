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

// Sends the next step when none is in flight and there is work.
void maybe_step(self_ptr self) {
  auto& st = self->state;
  if (st.step_in_flight) return;
  std::vector<outgoing_event> events;
  std::optional<msg::step_plan> plan = st.core->plan(events);
  deliver(events);
  if (!plan) return;
  st.step_in_flight = true;
  self->send(st.engine, std::move(*plan));
}

}  // namespace

scheduler_actor::behavior_type scheduler_fn(self_ptr self, engine_actor engine,
                                            scheduler_options opts, msg::engine_ready ready) {
  self->state.core = std::make_unique<scheduler_core>(std::move(opts), ready);
  self->state.engine = std::move(engine);
  return {
      [self](msg::submit& s) {
        std::vector<outgoing_event> events;
        self->state.core->submit(std::move(s), events);
        deliver(events);
        maybe_step(self);
      },
      [self](msg::cancel c) {
        std::vector<outgoing_event> events;
        self->state.core->cancel(c.id, events);
        deliver(events);
        maybe_step(self);
      },
      [self](msg::step_result& r) {
        self->state.step_in_flight = false;
        std::vector<outgoing_event> events;
        self->state.core->on_result(std::move(r), events);
        deliver(events);
        maybe_step(self);
      },
      [self](msg::stats_atom) { return self->state.core->stats(); },
      [self](msg::drain_atom) {
        self->state.core->evict_all_cached();
        return self->state.core->stats();
      },
  };
}

}  // namespace courier::actors
