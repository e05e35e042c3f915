#pragma once
// The bytes of a response as they go on the wire: status line and headers, chunk framing, and
// the server's own JSON error bodies. Plain strings, no Boost, so they are tested directly.
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace courier::http {

// ASCII case-insensitive equality (header names, auth schemes).
bool iequals(std::string_view a, std::string_view b);

// How the body after a response head is delimited.
enum class body_framing {
  content_length,  // Content-Length: n, then n bytes
  chunked,         // Transfer-Encoding: chunked
  until_close,     // HTTP/1.0 stream: the body ends when the connection does
};

struct response_head {
  int status = 200;
  std::string content_type;  // omitted when empty
  std::vector<std::pair<std::string, std::string>> extra_headers;
  body_framing framing = body_framing::content_length;
  std::size_t content_length = 0;  // for content_length framing
  bool keep_alive = true;          // false: "Connection: close"
  bool http10_client = false;      // keep_alive then needs "Connection: keep-alive"
};

// What a 503 says in Retry-After when whoever answered did not say (seconds).
inline constexpr int default_retry_after_s = 1;

// "HTTP/1.1 <status> <reason>\r\n" and the headers, ending with the blank line. Server and
// Date are always set; extra headers that are not is_settable_header are dropped. A 503
// without a Retry-After among the extra headers gets "Retry-After: default_retry_after_s".
std::string format_head(const response_head& head);

// True if the handler may set this header: a valid token name that is none of the headers the
// server manages, and a value with no CR, LF or NUL.
bool is_settable_header(std::string_view name, std::string_view value);

// Whether a status may carry a body (1xx, 204 and 304 may not).
bool status_allows_body(int status);

std::string_view reason_phrase(int status);

// "<hex size>\r\n": what goes before a chunk's data (which is followed by "\r\n").
std::string chunk_prefix(std::size_t size_bytes);
inline constexpr std::string_view chunk_suffix = "\r\n";
inline constexpr std::string_view last_chunk = "0\r\n\r\n";

inline constexpr std::string_view continue_100 = "HTTP/1.1 100 Continue\r\n\r\n";

// {"error":{"message":...,"type":"invalid_request_error","param":null,"code":null}}, the
// OpenAI error shape as admission's api_error writes it (code: OpenAI's string code, of which
// none fits these; the status is the response's), for the errors the transport answers itself
// (400, 413, 431; 500 with type "server_error").
std::string error_json(int status, std::string_view message);

}  // namespace courier::http
