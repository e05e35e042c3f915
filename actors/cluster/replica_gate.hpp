#pragma once
// A replica's door (cluster.listen): what is published instead of the scheduler itself. It has
// the scheduler's interface and passes every message on, except that a request's grammar comes
// over the wire as GBNF text (masks do not travel: msg::output_grammar), which the gate compiles
// against this replica's own vocabulary, on a compiler thread of its own (neither the gate nor
// the scheduler waits: other requests pass meanwhile), before the scheduler sees the request; a
// cancel for a request still compiling ends it at the gate. A grammar that does not compile, or arrives before the replica can compile
// (no compiler set yet: admission not configured), fails its request with a clear error.
#include <caf/all.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "actors/scheduler/scheduler_handle.hpp"
#include "actors/telemetry/telemetry_handle.hpp"
#include "messages/type_ids.hpp"

namespace courier::actors {

// The GBNF text's grammar, compiled against this replica's vocabulary (admission's registry:
// cached by text). Throws std::exception naming what is wrong.
// (the GBNF text, the request's tenant: what the replica's registry scopes it by)
using wire_grammar_fn =
    std::function<msg::output_grammar(const std::string& gbnf, const std::string& tenant)>;

// Set once admission is configured (actors::runtime::set_wire_grammars); read by the gate.
class wire_grammars {
 public:
  void set(wire_grammar_fn f);
  wire_grammar_fn get() const;

 private:
  mutable std::mutex mutex_;
  wire_grammar_fn compile_;
};

// The gate's interface: the scheduler's, and the replica's metrics for a front end's /metrics
// (its telemetry actor's exposition; "" with none).
using replica_gate_actor =
    scheduler_actor::extend<caf::replies_to<msg::scrape_atom>::with<std::string>>;

// Spawns the gate in front of `scheduler` (it goes down with it); `telemetry` may be null.
replica_gate_actor spawn_replica_gate(caf::actor_system& sys, scheduler_actor scheduler,
                                      std::shared_ptr<wire_grammars> grammars,
                                      telemetry_actor telemetry);

}  // namespace courier::actors
