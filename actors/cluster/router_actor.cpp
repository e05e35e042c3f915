#include "actors/cluster/router_actor.hpp"

#include <caf/io/all.hpp>
#include <fmt/format.h>

#include "actors/telemetry/scrape_merge.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <cstdio>

namespace courier::actors {

namespace {

struct replica_link {
  std::string address;  // host:port
  scheduler_actor handle;  // null: gone, a connector is (or will be) trying again
  bool up = false;
  bool connecting = false;
  int missed = 0;              // heartbeats unanswered in a row
  std::uint64_t generation = 0;  // +1 per connection watched (stale updates are dropped)
  msg::scheduler_stats stats;  // the last heartbeat's answer
};

// A request routed to a replica, until its final event. On the wire it has an id of the
// router's own, new for each try, so words from a replica it was taken from (one cut off by
// a partition, answering again once healed) name no flight and are dropped.
struct flight {
  std::size_t replica = 0;
  caf::actor reply_to;    // the client's (admission's) actor
  msg::request_id client_id = 0;  // the id the client knows it by
  bool streamed = false;  // an event with output reached the client: no retry
  msg::submit request;    // as sent (reply_to: the router; id: the wire id), for a retry
  std::vector<std::uint64_t> hashes;  // its prompt's blocks, pending on the replica
};

struct pending_ack {
  caf::actor client;
  msg::request_id group = 0;  // the client's
};

struct router_state {
  static inline const char* name = "router";
  std::unique_ptr<cluster::router_core> core;
  std::vector<replica_link> replicas;
  std::unordered_map<msg::request_id, flight> flights;  // by wire id
  std::unordered_map<msg::request_id, msg::request_id> wire_of;  // client id -> wire id
  std::unordered_map<msg::request_id, pending_ack> acks;  // by the batch's wire group
  msg::request_id next_wire = 1;
  bool isolate_by_tenant = false;
  std::int64_t heartbeat_ms = 500;
  msg::engine_ready ready;
  // Each adapter's fingerprint, as the replicas read it (the first replica's ready, then the
  // loads' answers): an adapter's prompts are hashed under its key, as the replicas' are.
  std::map<std::string, std::uint64_t> adapter_fingerprints;
};

using self_ptr = router_impl::stateful_pointer<router_state>;

cache::cache_namespace namespace_of(const router_state& st, const msg::submit& s) {
  cache::cache_namespace ns;
  // As the replicas' schedulers name it (the adapter's key; kv_manager: the same id unless two
  // keys clash there, when this one's prompts merely match nothing). An adapter unknown here
  // (loaded on a replica behind the front end's back) matches nothing either.
  if (!s.adapter.empty()) {
    const auto it = st.adapter_fingerprints.find(s.adapter);
    ns.adapter_id = it == st.adapter_fingerprints.end()
                        ? cache::adapter_namespace_id("name:" + s.adapter)
                        : cache::adapter_namespace_id(cache::adapter_key(it->second));
  }
  if (st.isolate_by_tenant) ns.isolation_key = s.tenant;
  return ns;
}

void fail(const caf::actor& to, msg::request_id id, msg::error_code code, std::string why) {
  msg::token_event e;
  e.id = id;
  e.finish = msg::finish_reason::error;
  e.error = code;
  e.message = std::move(why);
  if (to) caf::anon_send(to, std::move(e));
}

// Records `s` as in flight on replica r under a new wire id (which `s` then carries, and its
// grammar as GBNF text: the replica's gate compiles it).
void take_off(router_state& st, std::size_t r, msg::submit& s, caf::actor client,
              msg::request_id client_id, std::vector<std::uint64_t> hashes) {
  s.id = st.next_wire++;
  msg::output_grammar& g = s.sampling.grammar;
  if (g && g.gbnf && g.wire_gbnf.empty()) g.wire_gbnf = *g.gbnf;
  s.reply_to = nullptr;  // set by the caller, after the copy kept for a retry
  st.wire_of[client_id] = s.id;
  st.flights[s.id] = flight{r, std::move(client), client_id, false, s, std::move(hashes)};
}

// Ends the flight `it` (its final event sent on, or it was failed or retried).
void land(router_state& st, std::unordered_map<msg::request_id, flight>::iterator it) {
  auto w = st.wire_of.find(it->second.client_id);
  if (w != st.wire_of.end() && w->second == it->first) st.wire_of.erase(w);
  st.flights.erase(it);
}

// Sends `s` to a replica the core picks, as a request of its own, or fails it.
void route(self_ptr self, msg::submit s, caf::actor client, msg::request_id client_id) {
  auto& st = self->state;
  std::vector<std::uint64_t> hashes;
  const std::optional<std::size_t> r =
      st.core->choose(namespace_of(st, s), s.prompt, nullptr, &hashes);
  if (!r) {
    st.wire_of.erase(client_id);
    fail(client, client_id, msg::error_code::overloaded, "no replica is up to serve the request");
    return;
  }
  s.group = 0;  // a group of its own there
  take_off(st, *r, s, std::move(client), client_id, std::move(hashes));
  s.reply_to = caf::actor_cast<caf::actor>(self);
  self->send(st.replicas[*r].handle, std::move(s));
}

// Has `r` watched anew: its scheduler sends a snapshot, then every batch, tagged with `r` and
// this connection's generation (a newer watch replaces the tags; older updates are dropped).
void watch(self_ptr self, std::size_t r) {
  auto& link = self->state.replicas[r];
  const std::uint64_t gen = ++link.generation;
  self->send(link.handle, msg::watch_cache{caf::actor_cast<caf::actor>(self),
                                           static_cast<std::uint32_t>(r), gen});
}

void mark_up(self_ptr self, std::size_t r) {
  auto& link = self->state.replicas[r];
  link.missed = 0;
  if (link.up) return;
  link.up = true;
  self->state.core->set_up(r, true);
  watch(self, r);
  std::fprintf(stderr, "courier: replica %s is up\n", link.address.c_str());
}

void mark_down(self_ptr self, std::size_t r, bool gone, const std::string& why) {
  auto& st = self->state;
  auto& link = st.replicas[r];
  if (gone) link.handle = nullptr;
  if (!link.up) return;
  link.up = false;
  st.core->set_up(r, false);
  std::fprintf(stderr, "courier: replica %s is down (%s)\n", link.address.c_str(), why.c_str());
  std::vector<flight> moved;
  for (auto it = st.flights.begin(); it != st.flights.end();) {
    if (it->second.replica != r) {
      ++it;
      continue;
    }
    // Cut off but not gone: it stops the request when the link heals (its words are dropped).
    if (link.handle) self->send(link.handle, msg::cancel{it->first});
    moved.push_back(std::move(it->second));
    it = st.flights.erase(it);
  }
  for (flight& f : moved) {
    if (f.streamed) {
      st.wire_of.erase(f.client_id);
      fail(f.reply_to, f.client_id, msg::error_code::engine_failure,
           fmt::format("replica {} went away while answering ({})", link.address, why));
    } else {  // nothing reached the client: the request starts again elsewhere
      route(self, std::move(f.request), std::move(f.reply_to), f.client_id);
    }
  }
}

// Tries to reach replica r again, off the router's thread (connecting blocks).
void reconnect(self_ptr self, std::size_t r) {
  auto& link = self->state.replicas[r];
  if (link.connecting) return;
  link.connecting = true;
  const std::size_t colon = link.address.rfind(':');
  const std::string host = link.address.substr(0, colon);
  const auto port = static_cast<std::uint16_t>(std::stoi(link.address.substr(colon + 1)));
  auto router = caf::actor_cast<caf::actor>(self);
  self->system().spawn<caf::detached>(
      [](caf::event_based_actor* c, caf::actor router, std::size_t r, std::string host,
         std::uint16_t port) {
        auto h = c->system().middleman().remote_actor<scheduler_actor>(host, port);
        msg::replica_back back{static_cast<std::uint32_t>(r), {}};
        if (h) back.handle = caf::actor_cast<caf::actor>(*h);
        caf::anon_send(router, std::move(back));
        c->quit();
      },
      router, r, host, port);
}

void add(msg::scheduler_stats& sum, const msg::scheduler_stats& s) {
  sum.num_waiting += s.num_waiting;
  sum.num_running += s.num_running;
  sum.num_free_blocks += s.num_free_blocks;
  sum.num_total_blocks += s.num_total_blocks;
  sum.num_cached_blocks += s.num_cached_blocks;
  sum.num_steps += s.num_steps;
  sum.num_preemptions += s.num_preemptions;
}

// Asks every replica that is up `what` and answers the sum of their stats.
template <class Atom>
caf::result<msg::scheduler_stats> ask_all(self_ptr self, Atom what) {
  auto& st = self->state;
  auto rp = self->make_response_promise<msg::scheduler_stats>();
  auto acc = std::make_shared<std::pair<std::size_t, msg::scheduler_stats>>();
  for (const replica_link& l : st.replicas) acc->first += l.up ? 1 : 0;
  if (acc->first == 0) return msg::scheduler_stats{};
  const auto timeout = std::chrono::milliseconds(10 * st.heartbeat_ms);
  for (replica_link& l : st.replicas) {
    if (!l.up) continue;
    self->request(l.handle, timeout, what)
        .then(
            [acc, rp](msg::scheduler_stats& s) mutable {
              add(acc->second, s);
              if (--acc->first == 0) rp.deliver(acc->second);
            },
            [acc, rp](caf::error&) mutable {
              if (--acc->first == 0) rp.deliver(acc->second);
            });
  }
  return rp;
}

// Every replica's metrics (asked of its gate), merged with a replica label on each sample; a
// replica that does not answer within ten heartbeats is left out.
caf::result<std::string> scrape_replicas(self_ptr self) {
  auto& st = self->state;
  struct tally {
    std::size_t left = 0;
    std::vector<telemetry::labelled_scrape> parts;
  };
  auto acc = std::make_shared<tally>();
  for (const replica_link& l : st.replicas) acc->left += l.up ? 1 : 0;
  if (acc->left == 0) return std::string();
  auto rp = self->make_response_promise<std::string>();
  const auto timeout = std::chrono::milliseconds(10 * st.heartbeat_ms);
  for (const replica_link& l : st.replicas) {
    if (!l.up) continue;
    const std::string label = fmt::format("replica=\"{}\"", l.address);
    self->request(caf::actor_cast<caf::actor>(l.handle), timeout, msg::scrape_atom_v)
        .then(
            [acc, rp, label](std::string& text) mutable {
              acc->parts.push_back({label, std::move(text)});
              if (--acc->left == 0) rp.deliver(telemetry::merge_scrapes(acc->parts));
            },
            [acc, rp](caf::error&) mutable {
              if (--acc->left == 0) rp.deliver(telemetry::merge_scrapes(acc->parts));
            });
  }
  return rp;
}

// Loads (or unloads...) an adapter on every replica that is up, each reading `c.path` on its
// own machine; answers the first refusal, naming its replica, or the replicas' success.
caf::result<msg::lora_ack> change_adapters(self_ptr self, msg::lora_change c) {
  auto& st = self->state;
  struct tally {
    std::size_t left = 0;
    bool any_ok = false;
    msg::lora_ack ack;
  };
  auto acc = std::make_shared<tally>();
  for (const replica_link& l : st.replicas) acc->left += l.up ? 1 : 0;
  if (acc->left == 0) return msg::lora_ack{false, 503, "no replica is up"};
  acc->ack.ok = true;
  auto rp = self->make_response_promise<msg::lora_ack>();
  auto refused = [acc](const std::string& address, msg::lora_ack a) {
    if (!acc->ack.ok) return;  // the first refusal is the answer
    a.error = fmt::format("replica {}: {}", address, a.error);
    acc->ack = std::move(a);
  };
  for (const replica_link& l : st.replicas) {
    if (!l.up) continue;
    self->request(l.handle, std::chrono::minutes(2), c)
        .then(
            [self, c, acc, rp, refused, address = l.address](msg::lora_ack& a) mutable {
              if (a.ok && c.op == msg::lora_change::load) {
                self->state.adapter_fingerprints[c.name] = a.fingerprint;
              } else if (a.ok && c.op == msg::lora_change::unload) {
                self->state.adapter_fingerprints.erase(c.name);
              }
              if (a.ok && acc->ack.ok && !acc->any_ok) acc->ack = a;
              if (a.ok) acc->any_ok = true;
              if (!a.ok) refused(address, std::move(a));
              if (--acc->left == 0) rp.deliver(acc->ack);
            },
            [acc, rp, refused, address = l.address](caf::error& e) mutable {
              refused(address, msg::lora_ack{false, 500, caf::to_string(e)});
              if (--acc->left == 0) rp.deliver(acc->ack);
            });
  }
  return rp;
}

// The router's state from its setup: the routing core, the adapters' fingerprints, a link to
// each replica (monitored where its scheduler is known), and the first heartbeat.
void set_up(self_ptr self, router_setup& setup) {
  auto& st = self->state;
  st.core = std::make_unique<cluster::router_core>(setup.addresses.size(), setup.routing);
  st.isolate_by_tenant = setup.isolate_by_tenant;
  st.heartbeat_ms = setup.heartbeat_ms;
  st.ready = setup.ready;
  for (std::size_t i = 0; i < st.ready.lora_adapters.size(); ++i) {
    if (i < st.ready.lora_adapter_fingerprints.size()) {
      st.adapter_fingerprints[st.ready.lora_adapters[i]] = st.ready.lora_adapter_fingerprints[i];
    }
  }
  for (std::size_t r = 0; r < setup.addresses.size(); ++r) {
    replica_link l;
    l.address = setup.addresses[r];
    l.handle = r < setup.handles.size() ? setup.handles[r] : scheduler_actor{};
    st.replicas.push_back(std::move(l));
    st.core->set_up(r, false);
  }
  for (std::size_t r = 0; r < st.replicas.size(); ++r) {
    if (st.replicas[r].handle) {
      self->monitor(st.replicas[r].handle);
      mark_up(self, r);
    }
  }
  self->set_down_handler([self](caf::down_msg& d) {
    for (std::size_t r = 0; r < self->state.replicas.size(); ++r) {
      const auto& h = self->state.replicas[r].handle;
      if (h && h.address() == d.source) mark_down(self, r, true, "its scheduler went down");
    }
  });
  self->send(self, msg::heartbeat_atom_v);
}

// msg::submit_batch: every choice to the replica the first one's prompt chooses, as one batch.
void route_batch(self_ptr self, msg::submit_batch& b) {
  auto& st = self->state;
  if (b.choices.empty()) return;
  caf::actor client = b.choices.front().reply_to;
  const msg::request_id group = b.choices.front().id;
  const bool grammar =
      std::any_of(b.choices.begin(), b.choices.end(), [](const msg::submit& s) {
        return s.sampling.grammar && !s.sampling.grammar.gbnf;
      });
  std::vector<std::uint64_t> first_hashes;
  const std::optional<std::size_t> r =
      grammar ? std::nullopt
              : st.core->choose(namespace_of(st, b.choices.front()),
                                b.choices.front().prompt, nullptr, &first_hashes);
  if (!r) {
    const auto code = grammar ? msg::error_code::invalid_request : msg::error_code::overloaded;
    const std::string why = grammar
                                ? "a grammar without its GBNF text cannot be sent to a replica"
                                : "no replica is up to serve the request";
    caf::anon_send(client, msg::submit_ack{group, code, why});
    for (const msg::submit& s : b.choices) fail(client, s.id, code, why);
    return;
  }
  const msg::request_id wire_group = st.next_wire;
  st.acks[wire_group] = pending_ack{client, group};
  for (std::size_t i = 0; i < b.choices.size(); ++i) {
    msg::submit& s = b.choices[i];
    // Each choice is one request in flight there, its prompt's blocks pending.
    std::vector<std::uint64_t> hashes =
        i == 0 ? std::move(first_hashes) : st.core->start_on(*r, namespace_of(st, s), s.prompt);
    const msg::request_id client_id = s.id;
    s.group = wire_group;
    take_off(st, *r, s, client, client_id, std::move(hashes));
    s.reply_to = caf::actor_cast<caf::actor>(self);
  }
  self->send(st.replicas[*r].handle, std::move(b));
}

// msg::replica_update: a replica's cache events, from its current link only, to the core.
void replica_updated(self_ptr self, const msg::replica_update& u) {
  auto& st = self->state;
  if (u.replica >= st.replicas.size() || u.generation != st.replicas[u.replica].generation ||
      !st.replicas[u.replica].up) {
    return;
  }
  cache::cache_event_log log;
  for (const msg::cache_event_msg& m : u.update.events) {
    cache::cache_event e;
    e.what = static_cast<cache::cache_event::kind>(m.kind);
    e.hashes = m.hashes;
    if (m.has_parent) e.parent = m.parent;
    e.tokens = m.tokens;
    e.block_size = m.block_size;
    e.adapter_id = m.adapter_id;
    if (m.medium > static_cast<std::uint8_t>(cache::cache_medium::disk)) continue;
    e.medium = static_cast<cache::cache_medium>(m.medium);
    log.push_back(std::move(e));
  }
  st.core->on_events(u.replica, log);
}

// msg::heartbeat_atom: every replica asked for its stats (three missed answers: down), the
// ones without a link reconnected; and the next heartbeat.
void heartbeat(self_ptr self) {
  auto& st = self->state;
  const auto every = std::chrono::milliseconds(st.heartbeat_ms);
  // Each answer may take a second at least: a replica busy compiling a grammar at its
  // gate, or on a loaded machine, is slow, not cut off.
  const auto timeout = std::max(every, std::chrono::milliseconds(1000));
  for (std::size_t r = 0; r < st.replicas.size(); ++r) {
    replica_link& l = st.replicas[r];
    if (!l.handle) {
      reconnect(self, r);
      continue;
    }
    self->request(l.handle, timeout, msg::stats_atom_v)
        .then(
            [self, r](msg::scheduler_stats& s) {
              self->state.replicas[r].stats = s;
              mark_up(self, r);
            },
            [self, r](caf::error& e) {
              auto& link = self->state.replicas[r];
              if (++link.missed >= 3) mark_down(self, r, false, caf::to_string(e));
            });
  }
  self->delayed_send(self, every, msg::heartbeat_atom_v);
}

}  // namespace

router_impl::behavior_type router_fn(self_ptr self, router_setup setup) {
  set_up(self, setup);
  return {
      [self](msg::submit& s) {
        if (s.sampling.grammar && !s.sampling.grammar.gbnf) {  // a replica could not compile it
          fail(s.reply_to, s.id, msg::error_code::invalid_request,
               "a grammar without its GBNF text cannot be sent to a replica");
          return;
        }
        caf::actor client = std::move(s.reply_to);
        const msg::request_id client_id = s.id;
        route(self, std::move(s), std::move(client), client_id);
      },
      [self](msg::submit_batch& b) { route_batch(self, b); },
      [self](msg::cancel c) {
        auto& st = self->state;
        auto w = st.wire_of.find(c.id);
        if (w == st.wire_of.end()) return;
        auto it = st.flights.find(w->second);
        if (it == st.flights.end()) return;
        const replica_link& l = st.replicas[it->second.replica];
        c.id = w->second;
        if (l.up) self->send(l.handle, c);
      },
      [self](msg::token_event& e) {
        auto& st = self->state;
        auto it = st.flights.find(e.id);
        if (it == st.flights.end()) return;  // a request failed over: the old replica's words
        flight& f = it->second;
        if (!e.tokens.empty() || !e.prompt_logprobs.empty()) f.streamed = true;
        const bool last = e.finish != msg::finish_reason::none;
        e.id = f.client_id;
        caf::anon_send(f.reply_to, std::move(e));
        if (last) {
          st.core->finished(f.replica, f.hashes);
          land(st, it);
        }
      },
      [self](msg::submit_ack& a) {
        auto it = self->state.acks.find(a.group);
        if (it == self->state.acks.end()) return;
        a.group = it->second.group;
        caf::anon_send(it->second.client, std::move(a));
        self->state.acks.erase(it);
      },
      [self](msg::replica_update& u) { replica_updated(self, u); },
      [self](msg::replica_back& b) {
        auto& link = self->state.replicas.at(b.replica);
        link.connecting = false;
        if (!b.handle || link.handle) return;
        link.handle = caf::actor_cast<scheduler_actor>(b.handle);
        self->monitor(link.handle);
        mark_up(self, b.replica);
      },
      [self](msg::heartbeat_atom) { heartbeat(self); },
      [self](msg::stats_atom a) { return ask_all(self, a); },
      [self](msg::drain_atom a) { return ask_all(self, a); },
      [self](msg::lora_change& c) { return change_adapters(self, std::move(c)); },
      [self](msg::scrape_atom) { return scrape_replicas(self); },
      [self](msg::ready_atom) { return self->state.ready; },
      [](msg::watch_cache&) {},    // a router holds no cache
      [](msg::step_result&) {},    // nor an engine
      [](msg::disk_deadline) {},
  };
}

router_impl spawn_router(caf::actor_system& sys, router_setup setup) {
  return sys.spawn(router_fn, std::move(setup));
}

}  // namespace courier::actors
