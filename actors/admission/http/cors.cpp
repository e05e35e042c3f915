#include "actors/admission/http/cors.hpp"

#include <algorithm>
#include <cctype>

namespace courier::http {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  const auto not_space = [](char c) { return c != ' ' && c != '\t'; };
  while (!s.empty() && !not_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && !not_space(s.back())) s.remove_suffix(1);
  return s;
}

// RFC 9110 token: what a header name may be.
bool is_token(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

std::string header_or_empty(const request& req, const char* name) {
  auto it = req.headers.find(name);
  return it == req.headers.end() ? std::string() : it->second;
}

}  // namespace

cors_policy::cors_policy(const std::vector<std::string>& allowed_origins) {
  for (const auto& o : allowed_origins) {
    if (o == "*") {
      any_ = true;
    } else if (!o.empty()) {
      origins_.push_back(o);
    }
  }
}

std::string cors_policy::allow_origin(std::string_view origin) const {
  if (origin.empty()) return {};
  if (any_) return "*";
  if (std::find(origins_.begin(), origins_.end(), origin) != origins_.end()) {
    return std::string(origin);
  }
  return {};
}

header_list cors_policy::response_headers(std::string_view origin) const {
  header_list out;
  if (!enabled()) return out;
  std::string allowed = allow_origin(origin);
  if (!allowed.empty()) {
    out.emplace_back("Access-Control-Allow-Origin", std::move(allowed));
    // Headers a page may read beyond the safelisted ones: the request's id, when to retry.
    out.emplace_back("Access-Control-Expose-Headers", "x-request-id, request-id, retry-after");
  }
  out.emplace_back("Vary", "Origin");
  return out;
}

header_list cors_policy::preflight_headers(const request& req,
                                           std::string_view methods) const {
  header_list out;
  if (allow_origin(header_or_empty(req, "origin")).empty()) return out;
  std::vector<std::string> names = {"Authorization", "Content-Type"};
  std::vector<std::string> seen = {"authorization", "content-type"};
  const std::string asked = header_or_empty(req, "access-control-request-headers");
  std::string_view rest = asked;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    std::string_view name = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (!is_token(name)) continue;  // never echo what is not a header name
    std::string key = lower(name);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    names.emplace_back(name);
  }
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : ", ") + n;
  out.emplace_back("Access-Control-Allow-Methods", std::string(methods));
  out.emplace_back("Access-Control-Allow-Headers", std::move(joined));
  out.emplace_back("Access-Control-Max-Age", std::to_string(cors_max_age_s));
  return out;
}

bool is_preflight(const request& req) {
  return req.method == "OPTIONS" && req.headers.count("origin") > 0 &&
         req.headers.count("access-control-request-method") > 0;
}

}  // namespace courier::http
