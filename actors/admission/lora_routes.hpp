#pragma once
// POST /v1/load_lora_adapter {"lora_name", "lora_path"} and /v1/unload_lora_adapter
// {"lora_name"} (vLLM's endpoints): served with lora.runtime_loading, by admin keys only when
// API keys are configured. The scheduler (and through it the engine, which reads the folder on
// a thread of its own) answers; then the adapter is listed and usable, or no longer either.
#include <caf/actor_system.hpp>

#include <memory>
#include <string>

#include "actors/admission/admission_context.hpp"
#include "actors/admission/http/server.hpp"
#include "actors/admission/routes.hpp"

namespace courier::admission {

// Answers `out` (200 text as vLLM does, or an api_error: 400 bad body or adapter, 403 not an
// admin key, 404 off or unknown adapter, 409 name taken).
void answer_lora_route(caf::actor_system& sys, std::shared_ptr<admission_context> ctx, route r,
                       const std::string& tenant, const std::string& body,
                       std::shared_ptr<http::response_writer> out);

}  // namespace courier::admission
