#pragma once
// The API's paths and the methods each takes: what admission_server dispatches on, what a 405
// lists in Allow and what a CORS preflight is told. Plain strings, tested directly.
#include <optional>
#include <string>
#include <string_view>

namespace courier::admission {

enum class route {
  health, metrics, models, model, tokenize, detokenize, completions, chat,
  messages,   // Anthropic's Messages API
  count_tokens,  // Anthropic's POST /v1/messages/count_tokens
  responses,  // OpenAI's Responses API
  stored_response,  // GET and DELETE /v1/responses/{id}: a response it kept
  embeddings,  // OpenAI's POST /v1/embeddings (models with sentence-transformers pooling)
  load_lora, unload_lora,  // vLLM's /v1/load_lora_adapter, /v1/unload_lora_adapter (admin)
  web,        // the web page (server.web_ui): "/" and "/ui/<file>"
  server_info,  // GET /server_info: the model, device, KV cache and scheduler settings
};

struct route_match {
  route which = route::health;
  // route::model: the percent-decoded id after /v1/models/ (may hold '/'); route::
  // stored_response: the id after /v1/responses/ (one path segment, percent-decoded).
  std::string id;
  std::string asset;     // route::web: the path of the page's file ("/" or "/ui/<file>")
};

// The route of a request path (no query string); nullopt for an unknown path.
std::optional<route_match> find_route(std::string_view path);

// Whether a route takes a method: GET and HEAD on what is read, POST on what computes, GET,
// HEAD and DELETE on a kept response; OPTIONS everywhere (answered by admission_server itself).
bool takes_method(route r, std::string_view method);

// The Allow header's value: "GET, HEAD, OPTIONS", "POST, OPTIONS" or (a kept response)
// "GET, HEAD, DELETE, OPTIONS".
const char* allowed_methods(route r);

// Health and metrics answer without an API key, as probes and scrapers expect; so does the web
// page's code (it holds no data: its requests to the API carry the key its user enters).
bool is_public(route r);

}  // namespace courier::admission
