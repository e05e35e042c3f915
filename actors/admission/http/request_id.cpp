#include "actors/admission/http/request_id.hpp"

#include <cinttypes>
#include <cstdint>
#include <cstdio>

namespace courier::http {

bool valid_request_id(std::string_view id) {
  if (id.empty() || id.size() > max_request_id_length) return false;
  for (const char c : id) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

request_ids::request_ids() {
  std::random_device rd;
  rng_.seed((static_cast<std::uint64_t>(rd()) << 32) ^ rd());
}

std::string request_ids::id_for(std::string_view client_id) {
  if (valid_request_id(client_id)) return std::string(client_id);
  const std::uint64_t hi = rng_(), lo = rng_();
  char buf[32];
  std::snprintf(buf, sizeof buf, "req_%016" PRIx64 "%08" PRIx32, hi,
                static_cast<std::uint32_t>(lo));
  return buf;
}

}  // namespace courier::http
