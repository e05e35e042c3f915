#pragma once
// The scheduler's typed handle and nothing else: what admission includes to submit and cancel,
// without the scheduler's core, the caches or the engine (scheduler_actor.hpp).
#include <caf/typed_actor.hpp>

#include "messages/type_ids.hpp"

namespace courier::actors {

using scheduler_actor = caf::typed_actor<
    // Start a request; token_events go to submit.reply_to (a rejection is one final event).
    caf::reacts_to<msg::submit>,
    // Start one HTTP request's choices, all or none; a submit_ack goes to their reply_to first.
    caf::reacts_to<msg::submit_batch>,
    // Stop a request now, its blocks freed at once; final event cancelled (or stop: stop string).
    caf::reacts_to<msg::cancel>,
    // The engine's answer to the step in flight.
    caf::reacts_to<msg::step_result>,
    // A disk batch's reads took too long: who waits for them queues without them.
    caf::reacts_to<msg::disk_deadline>,
    // A snapshot of the state and counters.
    caf::replies_to<msg::stats_atom>::with<msg::scheduler_stats>,
    // Prefix cache: evict every unreferenced block; replies with the stats after.
    caf::replies_to<msg::drain_atom>::with<msg::scheduler_stats>,
    // A LoRA adapter loaded at run time (answered once the engine has read it) or unloaded
    // (answered at once: new requests for it are refused, those admitted finish with it).
    caf::replies_to<msg::lora_change>::with<msg::lora_ack>,
    // What the engine reported at start (a front end routing to this replica configures
    // admission from it).
    caf::replies_to<msg::ready_atom>::with<msg::engine_ready>,
    // The prefix cache's events for a router (cluster.listen): its contents now, then each
    // batch, until the watcher goes down.
    caf::reacts_to<msg::watch_cache>>;

}  // namespace courier::actors
