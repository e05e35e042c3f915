#pragma once
// POST /tokenize and /detokenize. Rendering a chat template and tokenizing a prompt of megabytes
// takes long enough to stall every other connection and stream, so the server runs these on its
// text_pool, never on the HTTP I/O thread or a CAF worker.
#include <memory>
#include <string>

#include "actors/admission/admission_context.hpp"
#include "actors/admission/http/server.hpp"

namespace courier::admission {

// count_tokens: Anthropic's POST /v1/messages/count_tokens, a Messages body (no max_tokens
// needed) to {"input_tokens": N}, the prompt the same body gets on /v1/messages; its errors in
// Anthropic's shape.
enum class token_route { tokenize, detokenize, count_tokens };

// Answers `out` (200 with the JSON result, or the api_error) on the calling thread; nothing
// when the client is already gone.
void answer_token_route(const admission_context& ctx, token_route route, const std::string& body,
                        http::response_writer& out);

}  // namespace courier::admission
