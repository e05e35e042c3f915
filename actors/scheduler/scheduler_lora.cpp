// LoRA adapters loaded and unloaded at run time (POST /v1/load_lora_adapter,
// /v1/unload_lora_adapter) and host copies read again: the core's side of lora_admission,
// where requests are involved (an unloaded adapter goes from the engine once no sequence uses
// it; a copy that could not be read again fails the requests waiting for it).
#include <fmt/format.h>

#include "actors/scheduler/scheduler_core.hpp"

namespace courier::actors {

msg::lora_ack scheduler_core::begin_load(const std::string& name) {
  return loras_.begin_load(name, ready_.model_name);
}

void scheduler_core::load_done(const std::string& name, bool ok, std::uint64_t fingerprint) {
  loras_.load_done(name, ok, fingerprint);
}

std::vector<msg::lora_change> scheduler_core::take_lora_host_changes() {
  return loras_.take_host_changes();
}

void scheduler_core::lora_staged(const std::string& name, bool ok, const std::string& error,
                                 std::vector<outgoing_event>& out) {
  if (!loras_.staged(name, ok) || ok) return;
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

msg::lora_ack scheduler_core::unload(const std::string& name) { return loras_.unload(name); }

std::vector<std::string> scheduler_core::take_unloaded() {
  return loras_.take_unloaded([this](const std::string& adapter) {
    for (const auto& [id, s] : seqs_) {
      if (s->req.adapter == adapter) return true;
    }
    return false;
  });
}

}  // namespace courier::actors
