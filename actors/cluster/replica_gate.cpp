#include "actors/cluster/replica_gate.hpp"

#include <algorithm>
#include <exception>
#include <unordered_map>
#include <utility>
#include <vector>

namespace courier::actors {

void wire_grammars::set(wire_grammar_fn f) {
  std::lock_guard<std::mutex> lock(mutex_);
  compile_ = std::move(f);
}

wire_grammar_fn wire_grammars::get() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return compile_;
}

namespace {

// Compiles `s`'s wire grammar in place; the reason it cannot, or "".
std::string compile_wire_grammar(msg::submit& s, const wire_grammars& grammars) {
  msg::output_grammar& g = s.sampling.grammar;
  if (g.wire_gbnf.empty() || g.masks) return "";
  const wire_grammar_fn f = grammars.get();
  if (!f) return "this replica cannot compile grammars (it has no tokenizer, or is starting)";
  try {
    msg::output_grammar here = f(g.wire_gbnf, s.tenant);
    g.masks = std::move(here.masks);
    g.gbnf = std::move(here.gbnf);
    g.wire_gbnf.clear();
  } catch (const std::exception& e) {
    return std::string("the replica could not compile the request's grammar: ") + e.what();
  }
  return "";
}

void refuse(const msg::submit& s, const std::string& why) {
  msg::token_event e;
  e.id = s.id;
  e.finish = msg::finish_reason::error;
  e.error = msg::error_code::invalid_request;
  e.message = why;
  e.use.prompt_tokens = static_cast<std::int32_t>(s.prompt.size());
  if (s.reply_to) caf::anon_send(s.reply_to, std::move(e));
}

// The compiler: its own thread (detached), one grammar at a time, so that a grammar that takes
// up to its compile limit holds neither the gate (other requests' submits and cancels) nor a CAF
// worker. Answers (the submit, compiled in place; why not, or "").
caf::behavior compiler_fn(caf::event_based_actor*, std::shared_ptr<wire_grammars> grammars) {
  return {
      [grammars](msg::submit& s) {
        std::string why = compile_wire_grammar(s, *grammars);
        return caf::make_message(std::move(s), std::move(why));
      },
      [grammars](msg::submit_batch& b) {
        std::string why;
        for (msg::submit& s : b.choices) {
          why = compile_wire_grammar(s, *grammars);
          if (!why.empty()) break;
        }
        return caf::make_message(std::move(b), std::move(why));
      },
  };
}

bool has_wire_grammar(const msg::submit& s) {
  return !s.sampling.grammar.wire_gbnf.empty() && !s.sampling.grammar.masks;
}

// Requests whose grammars are being compiled, and whether a cancel came for them meanwhile
// (the cancel is then kept here: the scheduler has not seen the request yet).
using compiling_set = std::unordered_map<msg::request_id, bool>;

// After its compile: the request goes on, or ends (refused; cancelled while it compiled).
void compiled(msg::submit& s, const std::string& why, compiling_set& compiling,
              const scheduler_actor& scheduler, replica_gate_actor::pointer self) {
  const auto it = compiling.find(s.id);
  const bool cancelled = it != compiling.end() && it->second;
  if (it != compiling.end()) compiling.erase(it);
  if (cancelled) {
    msg::token_event e;
    e.id = s.id;
    e.finish = msg::finish_reason::cancelled;
    e.use.prompt_tokens = static_cast<std::int32_t>(s.prompt.size());
    if (s.reply_to) caf::anon_send(s.reply_to, std::move(e));
    return;
  }
  if (!why.empty()) return refuse(s, why);
  self->send(scheduler, std::move(s));
}

void batch_compiled(msg::submit_batch& b, const std::string& why, compiling_set& compiling,
                    const scheduler_actor& scheduler, replica_gate_actor::pointer self) {
  bool cancelled = false;
  for (const msg::submit& s : b.choices) {
    const auto it = compiling.find(s.id);
    if (it == compiling.end()) continue;
    cancelled = cancelled || it->second;
    compiling.erase(it);
  }
  if (why.empty() && !cancelled) return self->send(scheduler, std::move(b));
  // All or none, as the scheduler's refusal.
  const std::string reason = why.empty() ? "cancelled while its grammar compiled" : why;
  if (!b.choices.empty() && b.choices.front().reply_to) {
    caf::anon_send(b.choices.front().reply_to,
                   msg::submit_ack{b.choices.front().id, msg::error_code::invalid_request, reason});
  }
  for (const msg::submit& s : b.choices) refuse(s, reason);
}

replica_gate_actor::behavior_type gate_fn(replica_gate_actor::pointer self,
                                          scheduler_actor scheduler,
                                          std::shared_ptr<wire_grammars> grammars,
                                          telemetry_actor telemetry) {
  self->monitor(scheduler);  // not linked: the gate goes with the scheduler, never the reverse
  self->set_down_handler([self](caf::down_msg& d) { self->quit(d.reason); });
  auto compiler = self->spawn<caf::detached + caf::linked>(compiler_fn, grammars);
  auto compiling = std::make_shared<compiling_set>();
  return {
      [self, scheduler, compiler, compiling](msg::submit& s) {
        if (!has_wire_grammar(s)) return self->send(scheduler, std::move(s));
        compiling->emplace(s.id, false);
        self->request(compiler, caf::infinite, std::move(s))
            .then([self, scheduler, compiling](msg::submit& done, std::string& why) {
              compiled(done, why, *compiling, scheduler, self);
            });
      },
      [self, scheduler, compiler, compiling](msg::submit_batch& b) {
        if (std::none_of(b.choices.begin(), b.choices.end(), has_wire_grammar)) {
          return self->send(scheduler, std::move(b));
        }
        for (const msg::submit& s : b.choices) compiling->emplace(s.id, false);
        self->request(compiler, caf::infinite, std::move(b))
            .then([self, scheduler, compiling](msg::submit_batch& done, std::string& why) {
              batch_compiled(done, why, *compiling, scheduler, self);
            });
      },
      [self, scheduler, compiling](msg::cancel c) {
        const auto it = compiling->find(c.id);
        if (it != compiling->end()) {
          it->second = true;  // ends once compiled, never reaching the scheduler
          return;
        }
        self->send(scheduler, c);
      },
      [self, scheduler](msg::step_result& r) { self->send(scheduler, std::move(r)); },
      [self, scheduler](msg::disk_deadline d) { self->send(scheduler, d); },
      [self, scheduler](msg::stats_atom a) { return self->delegate(scheduler, a); },
      [self, scheduler](msg::drain_atom a) { return self->delegate(scheduler, a); },
      [self, scheduler](msg::lora_change& c) { return self->delegate(scheduler, std::move(c)); },
      [self, scheduler](msg::ready_atom a) { return self->delegate(scheduler, a); },
      [self, scheduler](msg::watch_cache& w) { self->send(scheduler, std::move(w)); },
      [self, telemetry](msg::scrape_atom a) -> caf::result<std::string> {
        if (!telemetry) return std::string();
        return self->delegate(telemetry, a);
      },
  };
}

}  // namespace

replica_gate_actor spawn_replica_gate(caf::actor_system& sys, scheduler_actor scheduler,
                                      std::shared_ptr<wire_grammars> grammars,
                                      telemetry_actor telemetry) {
  return sys.spawn(gate_fn, std::move(scheduler), std::move(grammars), std::move(telemetry));
}

}  // namespace courier::actors
