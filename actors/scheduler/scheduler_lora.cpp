// LoRA adapters loaded and unloaded at run time (POST /v1/load_lora_adapter,
// /v1/unload_lora_adapter): which names requests may use, and when an unloaded adapter may go
// from the engine (no sequence uses it, so no later plan loads it into a slot).
#include <fmt/format.h>

#include "actors/scheduler/scheduler_core.hpp"

namespace courier::actors {

msg::lora_ack scheduler_core::begin_load(const std::string& name) {
  if (loras_.capacity() == 0) {
    return {false, 400, "this server has no LoRA slots (lora.runtime_loading, lora.max_loras)"};
  }
  if (name.empty() || name == ready_.model_name) {
    return {false, 400,
            fmt::format("'{}' cannot name an adapter (the base model's name, or "
                        "empty)",
                        name)};
  }
  if (adapters_.count(name) || loading_adapters_.count(name) || unloading_.count(name)) {
    return {false, 409,
            fmt::format("the adapter '{}' is {}", name,
                        unloading_.count(name) ? "still being unloaded" : "already loaded")};
  }
  loading_adapters_.insert(name);
  return {true, 200, ""};
}

void scheduler_core::load_done(const std::string& name, bool ok) {
  loading_adapters_.erase(name);
  if (ok) adapters_.insert(name);
}

msg::lora_ack scheduler_core::unload(const std::string& name) {
  if (!adapters_.erase(name)) {
    return {false, 404, fmt::format("no LoRA adapter '{}' is loaded", name)};
  }
  unloading_.insert(name);  // new requests are refused; those admitted finish with it
  return {true, 200, ""};
}

std::vector<std::string> scheduler_core::take_unloaded() {
  std::vector<std::string> gone;
  for (auto it = unloading_.begin(); it != unloading_.end();) {
    bool used = false;
    for (const auto& [id, s] : seqs_) used = used || s->req.adapter == *it;
    if (used) {
      ++it;
      continue;
    }
    loras_.drop(*it);
    gone.push_back(*it);
    it = unloading_.erase(it);
  }
  return gone;
}

}  // namespace courier::actors
