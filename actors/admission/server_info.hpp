#pragma once
// GET /server_info: what this server runs, for its operators and the web page's dashboard (as
// SGLang's and vLLM's /server_info): the model and how its output is read, the device, the KV
// cache as the engine sized it (blocks, block size, tiers), the scheduler's batch limits and
// the speculative and LoRA settings. Values the engine decided (the number of KV blocks, the
// device) come from its engine_ready, settings from the config; secrets (API keys, tenants) and
// file paths are left out. Built once at start, the same for every caller with a valid key.
#include <string>

#include "actors/config/config.hpp"
#include "messages/step.hpp"

namespace courier::admission {

struct admission_context;

// The JSON document (serialized), from a context configure_context has filled.
std::string server_info_json(const admission_context& ctx, const config::server_config& cfg,
                             const msg::engine_ready& ready);

}  // namespace courier::admission
