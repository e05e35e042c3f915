#include "actors/cluster/replica_gate.hpp"

#include <exception>
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

replica_gate_actor::behavior_type gate_fn(replica_gate_actor::pointer self,
                                          scheduler_actor scheduler,
                                          std::shared_ptr<wire_grammars> grammars,
                                          telemetry_actor telemetry) {
  self->monitor(scheduler);  // not linked: the gate goes with the scheduler, never the reverse
  self->set_down_handler([self](caf::down_msg& d) { self->quit(d.reason); });
  return {
      [self, scheduler, grammars](msg::submit& s) {
        const std::string why = compile_wire_grammar(s, *grammars);
        if (!why.empty()) return refuse(s, why);
        self->send(scheduler, std::move(s));
      },
      [self, scheduler, grammars](msg::submit_batch& b) {
        std::string why;
        for (msg::submit& s : b.choices) {
          why = compile_wire_grammar(s, *grammars);
          if (!why.empty()) break;
        }
        if (!why.empty() && !b.choices.empty()) {  // all or none, as the scheduler's refusal
          const msg::submit& first = b.choices.front();
          if (first.reply_to) {
            caf::anon_send(first.reply_to,
                           msg::submit_ack{first.id, msg::error_code::invalid_request, why});
          }
          for (const msg::submit& s : b.choices) refuse(s, why);
          return;
        }
        self->send(scheduler, std::move(b));
      },
      [self, scheduler](msg::cancel c) { self->send(scheduler, c); },
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
