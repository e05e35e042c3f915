#pragma once
// LoRA adapters on the scheduler's side, in one class with no messaging: which names requests
// may use (registered at start, loaded and unloaded at run time), what each is keyed by in the
// caches (its fingerprint), the engine's slots (lora_slots: a running sequence holds its
// adapter's) and host copies (lora_host_copies), and who is admitted while slots are short
// (gate). scheduler_core asks it and applies its answers; tests drive it directly.
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "actors/scheduler/lora_host.hpp"
#include "actors/scheduler/lora_slots.hpp"
#include "messages/step.hpp"

namespace courier::actors {

class lora_admission {
 public:
  // The engine's slots, registered adapters (with their fingerprints) and host copies. Throws
  // std::invalid_argument when the fingerprints do not match the adapters one to one.
  explicit lora_admission(const msg::engine_ready& ready);

  // Whether requests may name `adapter` now (registered or loaded, not unloaded).
  bool known(const std::string& adapter) const { return adapters_.count(adapter) > 0; }
  // What the caches key `adapter` by: its fingerprint (cache::adapter_key), never its name; ""
  // for the base model.
  std::string cache_key(const std::string& adapter) const;

  // One admission pass: once a request waits for a slot, later ones go ahead of it only when
  // they need no new slot and not the slot it waits for to empty (lora_slots::slot_to_drain).
  struct pass {
    bool waits = false;       // an earlier request of this pass waits for a slot
    std::int32_t drain = -1;  // the slot kept from new holders for it (-1: one is free)
  };
  // Whether a request for `adapter` ("": the base) may be admitted in this pass; one that may
  // not and has no host copy has its copy staged (take_host_changes).
  bool gate(const std::string& adapter, pass& p);
  // Its slot for an admitted request (gate said yes), loading it there when it is not.
  lora_hold acquire(const std::string& adapter);
  // The loads the next plan carries; a failed step's are forgotten (their slots hold nothing
  // known).
  std::vector<msg::lora_load> take_loads() { return slots_.take_loads(); }
  void forget(const std::vector<msg::lora_load>& loads) { slots_.forget(loads); }

  // Run-time loading. begin_load: whether `name` may be loaded now (not the base model's name,
  // `model_name`; not loaded, being loaded or being unloaded); load_done says how the engine's
  // read went, making it usable. unload: refused (404) for a name not loaded, else new
  // requests for it are refused from now; take_unloaded: those no request uses any more
  // (`used`), which the engine may drop.
  msg::lora_ack begin_load(const std::string& name, const std::string& model_name);
  void load_done(const std::string& name, bool ok, std::uint64_t fingerprint);
  msg::lora_ack unload(const std::string& name);
  std::vector<std::string> take_unloaded(const std::function<bool(const std::string&)>& used);

  // Host copies (lora.max_cpu_loras): what the engine is to do since the last call (stage: read
  // an adapter again, answered by staged(); evict: drop a copy). staged: false when nothing
  // waited for that read; else true, and when !ok the caller fails the requests waiting for it.
  std::vector<msg::lora_change> take_host_changes();
  bool staged(const std::string& name, bool ok);

  const lora_slots& slots() const { return slots_; }
  // Its counters and gauges into `s`.
  void count(msg::scheduler_stats& s) const;

 private:
  void evict_host_copies();  // beyond lora.max_cpu_loras (not one a queued load needs)

  lora_slots slots_;
  lora_host_copies host_;
  // The adapters requests may name; being read by the engine; unloaded but still used.
  std::set<std::string> adapters_, loading_, unloading_;
  // The fingerprint of each adapter in adapters_ or unloading_ (model::lora_adapter's).
  std::map<std::string, std::uint64_t> fingerprints_;
};

}  // namespace courier::actors
