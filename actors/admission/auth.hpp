#pragma once
// API keys: the credentials in an Authorization header, and the tenant a key belongs to.
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "actors/admission/http/server.hpp"

namespace courier::admission {

// The credentials of "Authorization: Bearer <key>": the scheme matched case-insensitively
// (RFC 9110 11.1), whitespace around the value and between scheme and key tolerated. nullopt
// for another scheme or no key.
std::optional<std::string> bearer_key(std::string_view authorization);

// Without API keys every request belongs to this one tenant, as in the reference design: the
// shared lookup cache then serves unauthenticated requests too (a request with no tenant
// neither reads nor writes it).
inline constexpr const char* unauthenticated_tenant = "default";

// The tenant of the request's key (Authorization: Bearer KEY, or without that header
// x-api-key: KEY as Anthropic's clients send it): unauthenticated_tenant when no keys are
// configured (no auth); nullopt when keys are configured and the request carries none of them.
std::optional<std::string> tenant_of(const std::map<std::string, std::string>& api_keys,
                                     const http::request& req);

}  // namespace courier::admission
