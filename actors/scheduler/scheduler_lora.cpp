// LoRA adapters at admission (lora_gate: who waits for a slot, who goes ahead), and loaded and
// unloaded at run time (POST /v1/load_lora_adapter, /v1/unload_lora_adapter): which names
// requests may use, and when an unloaded adapter may go from the engine (no sequence uses it, so
// no later plan loads it into a slot).
#include <fmt/format.h>

#include "actors/scheduler/scheduler_core.hpp"

namespace courier::actors {

bool scheduler_core::lora_gate(const sequence& s, lora_pass& pass) {
  if (s.req.adapter.empty()) return true;  // the base needs no slot
  const std::int32_t slot = loras_.slot_of(s.req.adapter);
  if (slot >= 0) return !(pass.waits && slot == pass.drain);
  if (pass.waits) return false;  // a new slot: after the request already waiting for one
  // No host copy to load it from: the engine reads it again meanwhile (one at a time: only
  // the first request waiting for a slot gets here).
  const bool copy = lora_host_.resident(s.req.adapter);
  if (!copy) lora_host_.stage(s.req.adapter);
  if (copy && loras_.any_free()) return true;  // acquire() gives it one
  pass.waits = true;
  pass.drain = loras_.slot_to_drain();
  return false;
}

void scheduler_core::take_waiting(msg::request_id id) {
  if (waiting_.front() == id) {
    waiting_.pop_front();
  } else {
    waiting_.erase(id);
  }
}

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

void scheduler_core::load_done(const std::string& name, bool ok, std::uint64_t fingerprint) {
  loading_adapters_.erase(name);
  if (!ok) return;
  adapters_.insert(name);
  adapter_fingerprints_[name] = fingerprint;
  lora_host_.add(name);  // the engine has just read it
  evict_host_copies();
}

void scheduler_core::evict_host_copies() {
  lora_host_.evict([this](const std::string& n) { return loras_.load_queued(n); });
}

std::vector<msg::lora_change> scheduler_core::take_lora_host_changes() {
  std::vector<msg::lora_change> out;
  for (std::string& name : lora_host_.take_stages()) {
    out.push_back({msg::lora_change::stage, std::move(name), ""});
  }
  for (std::string& name : lora_host_.take_evictions()) {
    out.push_back({msg::lora_change::evict, std::move(name), ""});
  }
  return out;
}

void scheduler_core::lora_staged(const std::string& name, bool ok, const std::string& error,
                                 std::vector<outgoing_event>& out) {
  if (!lora_host_.staged(name, ok)) return;
  if (ok) {
    evict_host_copies();
    return;
  }
  // Its folder went away or changed since it was registered: its waiting requests fail (the
  // running ones have it in their slot); a later request tries again.
  for (const msg::request_id id : waiting_.ids()) {
    sequence& s = *seqs_.at(id);
    if (s.req.adapter == name) {
      fail(s, msg::error_code::engine_failure,
           fmt::format("LoRA adapter '{}' could not be read again: {}", name, error), out);
    }
  }
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
    lora_host_.forget(*it);
    adapter_fingerprints_.erase(*it);
    gone.push_back(*it);
    it = unloading_.erase(it);
  }
  return gone;
}

}  // namespace courier::actors
