#pragma once
// The engine: a detached actor (its own thread) that owns the model, the device memory and the KV
// pages, and runs one step_plan as one forward pass. With `pipeline` it launches a step and
// answers it once the device has finished it, launching the next plan behind it meanwhile (a
// completion waiter thread blocks on the device instead); answers go out in plan order.
#include <caf/all.hpp>

#include <map>
#include <memory>
#include <vector>

#include "actors/engine/engine_handle.hpp"
#include "actors/engine/lora_loader.hpp"
#include "actors/engine/sequence_table.hpp"
#include "gpu/device.hpp"
#include "gpu/model/kv_cache.hpp"
#include "gpu/model/llama.hpp"
#include "gpu/model/model_group.hpp"
#include "gpu/model/tp_peers.hpp"
#include "messages/type_ids.hpp"

namespace courier::actors {

// The engine as spawned: the interface above, and what its waiter threads send it (a launched
// step may have finished; a batch of copies has). Its handle converts to engine_actor.
using engine_impl = engine_actor::extend<caf::reacts_to<msg::step_done_atom>,
                                         caf::reacts_to<msg::copies_done_atom, std::uint64_t>,
                                         caf::reacts_to<msg::lora_parsed_atom, std::uint64_t>,
                                         caf::reacts_to<msg::lora_timeout_atom, std::uint64_t>>;

// Everything the engine owns, built before it is spawned so that a bad model folder is reported
// by the composition root, not inside an actor. Destroyed in member order reversed: the cache
// and the model before their device.
struct engine_resources {
  std::unique_ptr<gpu::device> dev;
  std::unique_ptr<model::llama_model> model;
  std::unique_ptr<model::kv_cache> cache;
  // Tensor parallelism (parallel.tensor_size > 1): dev, model and cache above are rank 0's; the
  // other ranks step every plan with it, each on a thread of its own. Null: one device.
  // Destroyed first (declared after them): its threads stop before rank 0 goes.
  std::unique_ptr<model::tp_peers> peers;
  std::string model_name;
  // What was loaded (storage::weights_fingerprint, tokenizer_fingerprint), for engine_ready.
  std::uint64_t weights_fingerprint = 0;
  std::uint64_t tokenizer_fingerprint = 0;
  std::int64_t max_model_len = 0;
  // engine.pipeline: launch a step before the one in flight has finished (else each step is
  // waited for before the next plan is read).
  bool pipeline = true;
  // A hybrid model's state rows: the first state_slots are the running sequences' (the
  // scheduler's state pool), the rest up to model->state_slots() its snapshot rows.
  std::int32_t state_slots = 0;
  // LoRA adapters by name: every registered one's folder and the fingerprint of what was read
  // from it when it was registered (model::lora_adapter::fingerprint: a copy read again must
  // have it), and the host copies kept (lora.max_cpu_loras of them at most when that is set:
  // the scheduler says which), loaded into the model's pool (model->lora_slots()) as plans say
  // (msg::step_plan::lora_loads).
  struct registered_adapter {
    std::string dir;
    std::uint64_t fingerprint = 0;
  };
  std::map<std::string, registered_adapter> adapter_dirs;
  std::map<std::string, std::shared_ptr<const model::lora_adapter>> adapters;
  std::int32_t lora_max_rank = 0;  // lora.max_rank: adapters loaded at run time are checked
  // lora.load_timeout_s: a folder read not done by then is answered as failed (504).
  std::int32_t lora_load_timeout_s = 120;
  // How a folder is read (model::load_lora_adapter; tests put a slow one here).
  lora_loader::read_fn read_adapter = model::load_lora_adapter;
  std::int32_t lora_host_capacity = 0;  // lora.max_cpu_loras (0: every adapter keeps a copy)
};

// The engine, spawned detached (its own thread: it may block on the device); the only way to
// start one. Its state lives in the actor and goes when it quits.
engine_impl spawn_engine(caf::actor_system& sys, std::shared_ptr<engine_resources> res);

// The forward batch of a plan's rows that run, and the result of its forward output (pure;
// tested directly). seqs: the records with the plan applied (sequence_table::apply), whose
// tables the rows borrow (forward_row::table_ref): launch the batch while they hold; uses: how
// each row runs (sequence_table::resolve); a running row whose sequence has no start is
// std::invalid_argument. state_slots (a hybrid model): each row's Mamba-2 state is its
// sequence's slot, which its first row since its start must start fresh in (position 0),
// unless it restores a snapshot or a copy put its state back. The result has a row for every
// plan row: one that did not run is an error.
model::forward_batch to_forward_batch(const msg::step_plan& plan, const sequence_table& seqs,
                                      const std::vector<row_use>& uses, bool state_slots = false);
msg::step_result to_step_result(const msg::step_plan& plan, const std::vector<row_use>& uses,
                                model::forward_output&& out);

}  // namespace courier::actors
