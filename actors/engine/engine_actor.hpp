#pragma once
// The engine: a detached actor (its own thread; it blocks on the device) that owns the model,
// the device memory and the KV pages, and runs one step_plan as one forward pass.
#include <caf/all.hpp>

#include <memory>

#include "gpu/device.hpp"
#include "gpu/model/kv_cache.hpp"
#include "gpu/model/llama.hpp"
#include "messages/type_ids.hpp"

namespace courier::actors {

using engine_actor = caf::typed_actor<
    // What the loaded model and the KV memory allow; asked once at start.
    caf::replies_to<msg::ready_atom>::with<msg::engine_ready>,
    // Run one step; the step_result goes back to the sender. A failure fails the step, not the
    // engine: the result carries error = engine_failure and the engine keeps serving.
    caf::replies_to<msg::step_plan>::with<msg::step_result>>;

// Everything the engine owns, built before it is spawned so that a bad model folder is reported
// by the composition root, not inside an actor. Destroyed in member order reversed: the cache
// and the model before their device.
struct engine_resources {
  std::unique_ptr<gpu::device> dev;
  std::unique_ptr<model::llama_model> model;
  std::unique_ptr<model::kv_cache> cache;
  std::string model_name;
  std::int64_t max_model_len = 0;
};

// Spawn detached: sys.spawn<caf::detached>(engine_fn, resources).
engine_actor::behavior_type engine_fn(engine_actor::pointer self,
                                      std::shared_ptr<engine_resources> res);

// The forward batch of a plan, and the result of a forward output (pure; tested directly).
model::forward_batch to_forward_batch(const msg::step_plan& plan);
msg::step_result to_step_result(const msg::step_plan& plan, model::forward_output&& out);

}  // namespace courier::actors
