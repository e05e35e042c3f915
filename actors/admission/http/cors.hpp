#pragma once
// Cross-origin resource sharing: which browser origins may read the server's responses, and
// the headers that tell a browser so. The connection adds response_headers() to every response
// (the handler's and the transport's own errors); the layer above answers preflight requests
// (OPTIONS), because only it knows which methods a path takes. No Boost, no socket.
#include <string>
#include <string_view>
#include <vector>

#include "actors/admission/http/server.hpp"

namespace courier::http {

// How long a browser may cache a preflight's answer.
inline constexpr int cors_max_age_s = 600;

// Invariants: origins_ holds exact origins ("https://app.example:8443"); any_ is true when
// the list given held "*".
class cors_policy {
 public:
  cors_policy() = default;  // off: no CORS headers at all
  explicit cors_policy(const std::vector<std::string>& allowed_origins);

  bool enabled() const { return any_ || !origins_.empty(); }

  // The Access-Control-Allow-Origin value for a request's Origin header: "*" when any origin
  // is allowed, the origin itself when it is listed, empty otherwise (or when off, or when
  // the request has no Origin).
  std::string allow_origin(std::string_view origin) const;

  // For every response to a request with this Origin (empty: none sent): Access-Control-Allow-
  // Origin and -Expose-Headers (x-request-id, request-id, retry-after) when allowed, and
  // "Vary: Origin" whenever CORS is on (the answer depends on it).
  header_list response_headers(std::string_view origin) const;

  // What a preflight answer adds to response_headers() when the origin is allowed (empty
  // otherwise): Access-Control-Allow-Methods (`methods`, as given), -Allow-Headers
  // (Authorization, Content-Type and the valid names the request listed in
  // Access-Control-Request-Headers) and -Max-Age.
  header_list preflight_headers(const request& req, std::string_view methods) const;

 private:
  std::vector<std::string> origins_;
  bool any_ = false;
};

// Whether a request is a CORS preflight: OPTIONS with Origin and Access-Control-Request-Method.
bool is_preflight(const request& req);

}  // namespace courier::http
