#pragma once
// Turns a handler's answer to one request into the frames that go on the wire, and holds it to
// the order a response allows: send(), or start_stream(), write_chunk()..., end_stream(). What
// comes out of order is ignored (nothing returned). No Boost and no socket, so it is tested
// directly; the connection only queues what it returns.
//
//   awaiting ──send──────────────────────────────────────▶ done
//      └──────start_stream──▶ streaming ──end_stream──▶ done
//                               ↺ write_chunk
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace courier::http {

struct response_head;  // wire_format.hpp

// A piece of output: a head, a body, then a static tail ("\r\n" after a chunk); empty parts are
// skipped. Everything queued on a connection goes out in one gather write.
struct out_frame {
  std::string head;
  std::string body;
  std::string_view tail;
  bool ends_response = false;  // its writing completes the response
  bool then_close = false;     // the last frame on the connection
};

// How the request asked to be answered.
struct request_traits {
  bool http10 = false;     // no chunked encoding: a stream is read to close
  bool head = false;       // HEAD: the head a GET would get, and no body
  bool keep_alive = true;  // the client allows another request after this one
  // The transport's headers for this request's response, after the handler's (CORS: see
  // cors.hpp).
  std::vector<std::pair<std::string, std::string>> transport_headers;
};

// The transport's own answer to a request it cannot take (400, 413, 431): a JSON error, after
// which the connection closes. extra: the transport's headers, when the request head was read.
out_frame error_frame(int status, std::string_view message,
                      std::vector<std::pair<std::string, std::string>> extra = {});

class response_encoder {
 public:
  explicit response_encoder(request_traits traits) : traits_(traits) {}

  // closing: the server is stopping, so the response says "Connection: close".
  std::optional<out_frame> send(int status, std::string content_type, std::string body,
                                std::vector<std::pair<std::string, std::string>> extra,
                                bool closing);
  std::optional<out_frame> start_stream(int status, std::string content_type,
                                        std::vector<std::pair<std::string, std::string>> extra,
                                        bool closing);
  // An empty chunk is ignored: it would read as the end of the body.
  std::optional<out_frame> write_chunk(std::string data);
  std::optional<out_frame> end_stream();

 private:
  enum class phase { awaiting, streaming, done };

  // Appends traits_.transport_headers to a head's extra headers.
  void with_transport_headers(response_head& head) const;

  request_traits traits_;
  phase phase_ = phase::awaiting;
  bool stream_closes_ = false;  // the stream in progress ends the connection
};

}  // namespace courier::http
