#include "actors/admission/routes.hpp"

namespace courier::admission {
namespace {

constexpr std::string_view model_prefix = "/v1/models/";
constexpr std::string_view response_prefix = "/v1/responses/";
constexpr std::string_view web_prefix = "/ui/";

bool is_read(route r) {
  switch (r) {
    case route::health:
    case route::metrics:
    case route::models:
    case route::model:
    case route::web:
    case route::server_info:
    case route::stored_response:  // and DELETE (takes_method)
      return true;
    case route::tokenize:
    case route::detokenize:
    case route::completions:
    case route::chat:
    case route::messages:
    case route::count_tokens:
    case route::responses:
    case route::embeddings:
    case route::load_lora:
    case route::unload_lora:
      return false;
  }
  return false;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// RFC 3986 percent-decoding; a '%' not followed by two hex digits stays as it is.
std::string percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      const int hi = hex_value(s[i + 1]);
      const int lo = hex_value(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

}  // namespace

std::optional<route_match> find_route(std::string_view path) {
  route_match m;
  if (path == "/health") {
    m.which = route::health;
  } else if (path == "/server_info") {
    m.which = route::server_info;
  } else if (path == "/metrics") {
    m.which = route::metrics;
  } else if (path == "/v1/models") {
    m.which = route::models;
  } else if (path.size() > model_prefix.size() &&
             path.compare(0, model_prefix.size(), model_prefix) == 0) {
    m.which = route::model;
    m.id = percent_decode(path.substr(model_prefix.size()));
  } else if (path == "/tokenize") {
    m.which = route::tokenize;
  } else if (path == "/detokenize") {
    m.which = route::detokenize;
  } else if (path == "/v1/completions") {
    m.which = route::completions;
  } else if (path == "/v1/chat/completions") {
    m.which = route::chat;
  } else if (path == "/v1/messages") {
    m.which = route::messages;
  } else if (path == "/v1/messages/count_tokens") {
    m.which = route::count_tokens;
  } else if (path == "/v1/responses") {
    m.which = route::responses;
  } else if (path.size() > response_prefix.size() &&
             path.compare(0, response_prefix.size(), response_prefix) == 0 &&
             path.find('/', response_prefix.size()) == std::string_view::npos) {
    m.which = route::stored_response;
    m.id = percent_decode(path.substr(response_prefix.size()));
  } else if (path == "/v1/embeddings") {
    m.which = route::embeddings;
  } else if (path == "/v1/load_lora_adapter") {
    m.which = route::load_lora;
  } else if (path == "/v1/unload_lora_adapter") {
    m.which = route::unload_lora;
  } else if (path == "/" ||
             (path.size() > web_prefix.size() && path.compare(0, web_prefix.size(), web_prefix) == 0)) {
    m.which = route::web;
    m.asset = std::string(path);
  } else {
    return std::nullopt;
  }
  return m;
}

bool takes_method(route r, std::string_view method) {
  if (method == "OPTIONS") return true;
  if (r == route::stored_response && method == "DELETE") return true;
  if (is_read(r)) return method == "GET" || method == "HEAD";
  return method == "POST";
}

const char* allowed_methods(route r) {
  if (r == route::stored_response) return "GET, HEAD, DELETE, OPTIONS";
  return is_read(r) ? "GET, HEAD, OPTIONS" : "POST, OPTIONS";
}

bool is_public(route r) {
  return r == route::health || r == route::metrics || r == route::web;
}

}  // namespace courier::admission
