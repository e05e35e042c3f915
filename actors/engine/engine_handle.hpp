#pragma once
// The engine's typed handle and nothing else: what a caller of the engine includes (the
// scheduler, the runtime), without the model, the device or the engine's own state
// (engine_actor.hpp).
#include <caf/typed_actor.hpp>

#include "messages/type_ids.hpp"

namespace courier::actors {

using engine_actor = caf::typed_actor<
    // What the loaded model and the KV memory allow; asked once at start.
    caf::replies_to<msg::ready_atom>::with<msg::engine_ready>,
    // Run one step; the step_result goes back to the sender. A failure fails the step, not the
    // engine: the result carries error = engine_failure and the engine keeps serving.
    caf::replies_to<msg::step_plan>::with<msg::step_result>,
    // Answered once the copy stream has done the plan's async_copies of that batch (or they
    // failed, or never ran); asked after the plan.
    caf::replies_to<msg::copies_wait>::with<msg::copies_done>,
    // A LoRA adapter read from its folder (on a thread of its own, the steps going on) and kept
    // for plans to load into slots, or forgotten (the scheduler asks once nothing uses it).
    caf::replies_to<msg::lora_change>::with<msg::lora_ack>>;

}  // namespace courier::actors
