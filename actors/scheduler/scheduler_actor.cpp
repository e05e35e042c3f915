#include "actors/scheduler/scheduler_actor.hpp"

#include "actors/telemetry/trace.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace courier::actors {

namespace {

using self_ptr = scheduler_actor::stateful_pointer<scheduler_state>;

// The core's steps and ended requests as trace marks (zero-length spans courier-trace reads:
// which requests each step served, and when each request finished), when tracing is on.
class trace_observer final : public scheduler_observer {
 public:
  bool wants_rows() const override { return telemetry::tracing(); }
  void row_done(std::uint64_t step, std::int64_t sent_ns, const row& r) override {
    telemetry::span sp;
    sp.actor = "scheduler";
    sp.message = "row";
    sp.request = r.seq;
    sp.step = step;
    sp.start_ns = sent_ns;
    sp.prefill = r.prefill_tokens;
    sp.decode = r.decode ? 1 : 0;
    sp.drafts = r.drafts;
    if (r.accepted >= 0) sp.accepted = r.accepted;
    telemetry::record(sp);
  }
  void request_ended(msg::request_id id) override {
    if (!telemetry::tracing()) return;
    telemetry::span sp;
    sp.actor = "scheduler";
    sp.message = "finish";
    sp.request = id;
    sp.start_ns = telemetry::now_ns();
    telemetry::record(sp);
  }
};

void settle(self_ptr self, std::vector<outgoing_event> events = {});

// A plan's copies back from the host tier: asked after it (the engine answers once the copy
// stream has done them; an error, the engine gone: they failed, and are computed instead).
void wait_copies(self_ptr self, std::uint64_t batch) {
  auto done = [self](msg::copies_done& d) {
    if (!d.ok) {
      std::fprintf(stderr, "courier: KV host tier: copies back failed (%s); recomputing\n",
                   d.error.c_str());
    }
    self->state.core->on_copies_done(d);
    settle(self);
  };
  self->request(self->state.engine, caf::infinite, msg::copies_wait{batch})
      .then(done, [batch, done](caf::error& e) mutable {
        msg::copies_done d{batch, false, "the engine did not answer: " + caf::to_string(e)};
        done(d);
      });
}

// Each step to the engine, with its "plan" span (the engine finds step N + 1 in its mailbox
// when it finishes step N).
void send_step(self_ptr self, planned_step& step) {
  if (telemetry::tracing()) {
    telemetry::span sp;
    sp.actor = "scheduler";
    sp.message = "plan";
    sp.start_ns = step.start_ns;
    sp.duration_ns = step.end_ns - step.start_ns;
    sp.step = step.plan.step;
    sp.rows = static_cast<std::int32_t>(step.plan.rows.size());
    sp.prefill = step.prefill;
    sp.decode = step.decode;
    telemetry::record(sp);
  }
  const std::uint64_t batch = step.plan.copy_batch;
  self->send(self->state.engine, std::move(step.plan));
  if (batch != 0) wait_copies(self, batch);
}

// A batch of the disk tier's reads and writes, to the disk actor; its answer comes back here
// (an error, the actor gone: every copy failed, so their blocks are dropped, never served).
void send_disk(self_ptr self, msg::disk_batch& b) {
  auto& st = self->state;
  const std::uint64_t id = b.id;
  const std::size_t n = b.ops.size();
  auto done = [self](msg::disk_done& d) {
    if (!d.error.empty() && self->state.disk_errors++ % 1000 == 0) {  // the first, then 1 in 1000
      std::fprintf(stderr, "courier: KV disk tier: %s (the block is dropped; %llu failures)\n",
                   d.error.c_str(), static_cast<unsigned long long>(self->state.disk_errors));
    }
    self->state.core->on_disk_done(d);
    settle(self);
  };
  auto failed = [id, n, done](const std::string& why) mutable {
    msg::disk_done d;
    d.id = id;
    d.ok.assign(n, 0);
    d.error = why;
    done(d);
  };
  if (!st.disk) {  // a disk tier comes with its actor (runtime): never here
    failed("no disk actor");
    return;
  }
  const bool reads =
      std::any_of(b.ops.begin(), b.ops.end(), [](const msg::disk_op& op) { return !op.write; });
  if (reads) {  // requests wait for them: not past the deadline
    self->delayed_send(self, std::chrono::milliseconds(st.disk_read_timeout_ms),
                       msg::disk_deadline{id});
  }
  self->request(st.disk, caf::infinite, std::move(b))
      .then(done, [failed](caf::error& e) mutable {
        failed("the disk actor did not answer: " + caf::to_string(e));
      });
}

// An adapter change for the engine: a stage's answer goes back to the core (its waiting
// requests admitted, or failed); unloads and drops need none.
void send_lora(self_ptr self, msg::lora_change& c) {
  if (c.op != msg::lora_change::stage) {
    self->request(self->state.engine, caf::infinite, std::move(c))
        .then([](msg::lora_ack&) {}, [](caf::error&) {});
    return;
  }
  auto staged = [self, name = c.name](bool ok, const std::string& error) {
    std::vector<outgoing_event> events;
    self->state.core->lora_staged(name, ok, error, events);
    settle(self, std::move(events));
  };
  self->request(self->state.engine, caf::infinite, std::move(c))
      .then([staged](msg::lora_ack& a) { staged(a.ok, a.error); },
            [staged](caf::error& e) {
              staged(false, "the engine did not answer: " + caf::to_string(e));
            });
}

// Every handler ends here: what the core leaves (scheduler_effects), sent in its order.
void settle(self_ptr self, std::vector<outgoing_event> events) {
  auto& st = self->state;
  scheduler_effects fx = st.core->take_effects(std::move(events));
  for (planned_step& step : fx.steps) send_step(self, step);
  for (msg::disk_batch& b : fx.disk) send_disk(self, b);
  for (msg::lora_change& c : fx.lora) send_lora(self, c);
  if (fx.report && st.telemetry) self->send(st.telemetry, std::move(*fx.report));
  for (outgoing_event& e : fx.events) {
    if (e.to) caf::anon_send(e.to, std::move(e.event));  // reply_to is dynamically typed
  }
}

msg::cache_update to_update(const cache::cache_event_log& log) {
  msg::cache_update u;
  for (const cache::cache_event& e : log) {
    msg::cache_event_msg m;
    m.kind = static_cast<std::uint8_t>(e.what);
    m.hashes = e.hashes;
    m.has_parent = e.parent.has_value();
    m.parent = e.parent.value_or(0);
    m.tokens = e.tokens;
    m.block_size = e.block_size;
    m.adapter_id = e.adapter_id;
    m.medium = static_cast<std::uint8_t>(e.medium);
    u.events.push_back(std::move(m));
  }
  return u;
}

// The actor's state: the core, the peers, and the cache watchers that every batch of cache
// events also goes to (until they go down).
void set_up(self_ptr self, engine_actor engine, scheduler_options opts, msg::engine_ready ready,
            telemetry_actor telemetry, disk_actor disk) {
  if (!opts.observer) opts.observer = std::make_shared<trace_observer>();
  self->state.disk_read_timeout_ms = opts.disk_read_timeout_ms;
  self->state.ready = ready;
  auto watchers = std::make_shared<std::vector<cache_watcher>>();
  self->state.watchers = watchers;
  if (opts.cache_events) {  // every batch to the watchers too
    opts.cache_events = [publish = std::move(opts.cache_events),
                         watchers](cache::cache_event_log log) {
      if (!watchers->empty()) {
        const msg::cache_update u = to_update(log);
        for (const cache_watcher& w : *watchers) {
          caf::anon_send(w.actor, msg::replica_update{w.replica, w.generation, u});
        }
      }
      publish(std::move(log));
    };
  }
  self->set_down_handler([self](caf::down_msg& d) {
    auto& w = *self->state.watchers;
    w.erase(std::remove_if(w.begin(), w.end(),
                           [&](const cache_watcher& x) { return x.actor.address() == d.source; }),
            w.end());
  });
  self->state.core = std::make_unique<scheduler_core>(std::move(opts), ready);
  self->state.engine = std::move(engine);
  self->state.telemetry = std::move(telemetry);
  self->state.disk = std::move(disk);
}

// msg::submit_batch: every choice's submit recorded, the ack sent before any event of the batch.
void submit_batch(self_ptr self, msg::submit_batch& b) {
  const msg::request_id first = b.choices.empty() ? 0 : b.choices.front().id;
  telemetry::scoped_span span("scheduler", "submit", first);
  if (span.active()) span->rows = static_cast<std::int32_t>(b.choices.size());
  for (std::size_t i = 1; telemetry::tracing() && i < b.choices.size(); ++i) {
    telemetry::span mark;  // every choice's story starts with a submit (courier-trace)
    mark.actor = "scheduler";
    mark.message = "submit";
    mark.request = b.choices[i].id;
    mark.start_ns = telemetry::now_ns();
    telemetry::record(mark);
  }
  caf::actor to = b.choices.empty() ? caf::actor_cast<caf::actor>(self->current_sender())
                                    : b.choices.front().reply_to;
  std::vector<outgoing_event> events;
  msg::submit_ack ack = self->state.core->submit_batch(std::move(b.choices), events);
  if (to) caf::anon_send(to, std::move(ack));  // before any event of the batch
  settle(self, std::move(events));
}

// msg::watch_cache: a replica watching the cache gets all of it now, then each batch.
void watch_cache(self_ptr self, msg::watch_cache& w) {
  if (!w.watcher) return;
  self->state.core->flush_cache_events();  // what the others have not had yet
  auto& all = *self->state.watchers;
  auto it = std::find_if(all.begin(), all.end(), [&](const cache_watcher& x) {
    return x.actor.address() == w.watcher.address();
  });
  if (it == all.end()) {
    self->monitor(w.watcher);
    it = all.insert(all.end(), cache_watcher{w.watcher, 0, 0});
  }
  it->replica = w.replica;
  it->generation = w.generation;
  caf::anon_send(w.watcher, msg::replica_update{w.replica, w.generation,
                                                to_update(self->state.core->cache_snapshot())});
}

// msg::lora_change: an unload at once; a load begun here, then asked of the engine.
caf::result<msg::lora_ack> change_lora(self_ptr self, msg::lora_change& c) {
  if (c.op == msg::lora_change::unload) {
    msg::lora_ack a = self->state.core->unload(c.name);
    settle(self);  // nothing may use it already
    return a;
  }
  if (c.op != msg::lora_change::load) {
    return msg::lora_ack{false, 400, "only loads and unloads are asked of the scheduler"};
  }
  msg::lora_ack a = self->state.core->begin_load(c.name);
  if (!a.ok) return a;
  auto promise = self->make_response_promise<msg::lora_ack>();
  const std::string name = c.name;
  self->request(self->state.engine, caf::infinite, std::move(c))
      .then(
          [self, promise, name](msg::lora_ack& r) mutable {
            self->state.core->load_done(name, r.ok, r.fingerprint);
            promise.deliver(r);
          },
          [self, promise, name](caf::error& e) mutable {
            self->state.core->load_done(name, false, 0);
            promise.deliver(
                msg::lora_ack{false, 500, "the engine did not answer: " + caf::to_string(e)});
          });
  return promise;
}

}  // namespace

scheduler_actor::behavior_type scheduler_fn(self_ptr self, engine_actor engine,
                                            scheduler_options opts, msg::engine_ready ready,
                                            telemetry_actor telemetry, disk_actor disk) {
  set_up(self, std::move(engine), std::move(opts), std::move(ready), std::move(telemetry),
         std::move(disk));
  return {
      [self](msg::submit& s) {
        telemetry::scoped_span span("scheduler", "submit", s.id);
        std::vector<outgoing_event> events;
        self->state.core->submit(std::move(s), events);
        settle(self, std::move(events));
      },
      [self](msg::submit_batch& b) { submit_batch(self, b); },
      [self](msg::cancel c) {
        telemetry::scoped_span span("scheduler", "cancel", c.id);
        std::vector<outgoing_event> events;
        self->state.core->cancel(c.id, events, c.reason);
        settle(self, std::move(events));
      },
      [self](msg::step_result& r) {
        telemetry::scoped_span span("scheduler", "step_result", 0, r.step);
        if (span.active()) span->rows = static_cast<std::int32_t>(r.rows.size());
        std::vector<outgoing_event> events;
        self->state.core->on_result(std::move(r), events);
        settle(self, std::move(events));
      },
      [self](msg::disk_deadline d) {
        self->state.core->on_disk_deadline(d.id);
        settle(self);
      },
      [self](msg::stats_atom) {
        telemetry::scoped_span span("scheduler", "stats");
        return self->state.core->stats();
      },
      [self](msg::ready_atom) { return self->state.ready; },
      [self](msg::watch_cache& w) { watch_cache(self, w); },
      [self](msg::drain_atom) {
        telemetry::scoped_span span("scheduler", "drain");
        self->state.core->evict_all_cached();
        settle(self);  // the copies of evicted blocks to the host tier go out; the events
        return self->state.core->stats();
      },
      [self](msg::lora_change& c) -> caf::result<msg::lora_ack> { return change_lora(self, c); },
  };
}

scheduler_actor spawn_scheduler(caf::actor_system& sys, engine_actor engine,
                                scheduler_options opts, msg::engine_ready ready,
                                telemetry_actor telemetry, disk_actor disk) {
  return sys.spawn<caf::detached>(scheduler_fn, std::move(engine), std::move(opts),
                                  std::move(ready), std::move(telemetry), std::move(disk));
}

}  // namespace courier::actors
