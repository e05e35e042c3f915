#include "actors/scheduler/lora_admission.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "cache/cache_namespace.hpp"

namespace courier::actors {

lora_admission::lora_admission(const msg::engine_ready& ready)
    : slots_(ready.lora_slots),
      host_(ready.lora_host_capacity, ready.lora_host_adapters),
      adapters_(ready.lora_adapters.begin(), ready.lora_adapters.end()) {
  if (ready.lora_adapter_fingerprints.size() != ready.lora_adapters.size()) {
    throw std::invalid_argument("engine_ready: one fingerprint per LoRA adapter is needed");
  }
  for (std::size_t i = 0; i < ready.lora_adapters.size(); ++i) {
    fingerprints_[ready.lora_adapters[i]] = ready.lora_adapter_fingerprints[i];
  }
}

std::string lora_admission::cache_key(const std::string& adapter) const {
  if (adapter.empty()) return {};
  const auto it = fingerprints_.find(adapter);
  // Every admitted request's adapter has one (submit refuses others); the name is a fallback
  // that no fingerprint's hex can equal.
  return it == fingerprints_.end() ? "name:" + adapter : cache::adapter_key(it->second);
}

bool lora_admission::gate(const std::string& adapter, pass& p) {
  if (adapter.empty()) return true;  // the base needs no slot
  const std::int32_t slot = slots_.slot_of(adapter);
  if (slot >= 0) return !(p.waits && slot == p.drain);
  if (p.waits) return false;  // a new slot: after the request already waiting for one
  // No host copy to load it from: the engine reads it again meanwhile (one at a time: only
  // the first request waiting for a slot gets here).
  const bool copy = host_.resident(adapter);
  if (!copy) host_.stage(adapter);
  if (copy && slots_.any_free()) return true;  // acquire() gives it one
  p.waits = true;
  p.drain = slots_.slot_to_drain();
  return false;
}

lora_hold lora_admission::acquire(const std::string& adapter) {
  host_.touch(adapter);
  return *slots_.acquire(adapter);
}

msg::lora_ack lora_admission::begin_load(const std::string& name, const std::string& model_name) {
  if (slots_.capacity() == 0) {
    return {false, 400, "this server has no LoRA slots (lora.runtime_loading, lora.max_loras)"};
  }
  if (name.empty() || name == model_name) {
    return {false, 400,
            fmt::format("'{}' cannot name an adapter (the base model's name, or empty)", name)};
  }
  if (adapters_.count(name) || loading_.count(name) || unloading_.count(name)) {
    return {false, 409,
            fmt::format("the adapter '{}' is {}", name,
                        unloading_.count(name) ? "still being unloaded" : "already loaded")};
  }
  loading_.insert(name);
  return {true, 200, ""};
}

void lora_admission::load_done(const std::string& name, bool ok, std::uint64_t fingerprint) {
  loading_.erase(name);
  if (!ok) return;
  adapters_.insert(name);
  fingerprints_[name] = fingerprint;
  host_.add(name);  // the engine has just read it
  evict_host_copies();
}

msg::lora_ack lora_admission::unload(const std::string& name) {
  if (!adapters_.erase(name)) {
    return {false, 404, fmt::format("no LoRA adapter '{}' is loaded", name)};
  }
  unloading_.insert(name);  // new requests are refused; those admitted finish with it
  return {true, 200, ""};
}

std::vector<std::string> lora_admission::take_unloaded(
    const std::function<bool(const std::string&)>& used) {
  std::vector<std::string> gone;
  for (auto it = unloading_.begin(); it != unloading_.end();) {
    if (used(*it)) {
      ++it;
      continue;
    }
    slots_.drop(*it);
    host_.forget(*it);
    fingerprints_.erase(*it);
    gone.push_back(*it);
    it = unloading_.erase(it);
  }
  return gone;
}

void lora_admission::evict_host_copies() {
  host_.evict([this](const std::string& n) { return slots_.load_queued(n); });
}

std::vector<msg::lora_change> lora_admission::take_host_changes() {
  std::vector<msg::lora_change> out;
  for (std::string& name : host_.take_stages()) {
    out.push_back({msg::lora_change::stage, std::move(name), ""});
  }
  for (std::string& name : host_.take_evictions()) {
    out.push_back({msg::lora_change::evict, std::move(name), ""});
  }
  return out;
}

bool lora_admission::staged(const std::string& name, bool ok) {
  if (!host_.staged(name, ok)) return false;
  if (ok) evict_host_copies();
  return true;
}

void lora_admission::count(msg::scheduler_stats& s) const {
  s.lora_slots_in_use = slots_.num_in_use();
  s.lora_loads = slots_.num_loads();
  s.lora_host_stages = host_.num_staged();
  s.lora_host_evictions = host_.num_evicted();
}

}  // namespace courier::actors
