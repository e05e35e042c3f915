#pragma once
// Every request's id (request::id), which every response to it carries as `x-request-id`
// (OpenAI's name) and `request-id` (Anthropic's): the client's X-Request-Id when it is 1 to 128
// visible ASCII characters, so that it can be echoed in a header and a log as it is; else one
// made here, "req_" and 24 hex digits (96 random bits). Used on the I/O thread only.
#include <cstddef>
#include <random>
#include <string>
#include <string_view>

namespace courier::http {

inline constexpr std::size_t max_request_id_length = 128;

// Whether a client's id is taken as it is.
bool valid_request_id(std::string_view id);

class request_ids {
 public:
  request_ids();  // seeded from std::random_device
  // `client_id` when valid_request_id, else a new one.
  std::string id_for(std::string_view client_id);

 private:
  std::mt19937_64 rng_;
};

}  // namespace courier::http
