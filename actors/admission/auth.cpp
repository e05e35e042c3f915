#include "actors/admission/auth.hpp"

#include "actors/admission/http/wire_format.hpp"

#include <cctype>

namespace courier::admission {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<std::string> bearer_key(std::string_view authorization) {
  std::string_view value = trim(authorization);
  std::size_t end = 0;
  while (end < value.size() && !is_space(value[end])) ++end;
  if (!http::iequals(value.substr(0, end), "bearer")) return std::nullopt;
  std::string_view key = trim(value.substr(end));
  if (key.empty()) return std::nullopt;
  return std::string(key);
}

std::optional<std::string> tenant_of(const std::map<std::string, std::string>& api_keys,
                                     const http::request& req) {
  if (api_keys.empty()) return std::string(unauthenticated_tenant);
  std::optional<std::string> key;
  if (auto it = req.headers.find("authorization"); it != req.headers.end()) {
    key = bearer_key(it->second);
  } else if (auto x = req.headers.find("x-api-key"); x != req.headers.end()) {
    key = std::string(trim(x->second));  // Anthropic's clients send the key this way
  }
  if (!key || key->empty()) return std::nullopt;
  auto found = api_keys.find(*key);
  if (found == api_keys.end()) return std::nullopt;
  return found->second;
}

}  // namespace courier::admission
