#pragma once
// One short-lived actor per /tokenize or /detokenize request. Rendering a chat template and
// tokenizing a prompt of megabytes takes long enough to stall every other connection, so it
// runs here, on a CAF worker, never on the HTTP I/O thread.
#include <caf/all.hpp>

#include <memory>
#include <string>

#include "actors/admission/admission_context.hpp"
#include "actors/admission/http/server.hpp"

namespace courier::admission {

enum class token_route { tokenize, detokenize };

// Spawns the actor, which answers `out` (200 with the JSON result, or the api_error) and quits.
void spawn_tokenize(caf::actor_system& sys, std::shared_ptr<admission_context> ctx,
                    token_route route, std::string body,
                    std::shared_ptr<http::response_writer> out);

}  // namespace courier::admission
