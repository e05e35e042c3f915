#pragma once
// The HTTP/1.1 transport of the OpenAI-compatible server: it reads requests, hands each to a
// handler, and writes the handler's answer, whole or as a chunked stream (SSE). It knows nothing
// of CAF or of OpenAI. Boost.Beast stays behind the pimpl, so including this costs no Boost.
// Threading, ownership and the disconnect contract: README.md in this folder.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace courier::http {

// Response headers a handler adds: (name, value) pairs, written in this order.
using header_list = std::vector<std::pair<std::string, std::string>>;

struct request {
  std::string method;                          // "GET", "POST", ... as the client spelled it
  std::string target;                          // path without the query string
  std::string query;                           // after '?', may be empty
  std::map<std::string, std::string> headers;  // lower-case names; repeats joined with ", "
  std::string body;
  // The request's id, which every response to it carries as x-request-id and request-id: the
  // client's X-Request-Id when it is 1 to 128 visible ASCII characters, else one the server
  // made (request_id.hpp).
  std::string id;
};

// How a handler answers. Thread-safe: every call may come from any thread (it posts to the I/O
// thread, which serialises everything a connection does). Exactly one of send() or
// start_stream()...end_stream() per request; calls out of that order are ignored.
class response_writer {
 public:
  virtual ~response_writer() = default;
  // The whole response, with Content-Length. extra_headers must not be Content-Length,
  // Transfer-Encoding, Connection, Date or Server (those are the server's); a header with a
  // bad name or a CR/LF in its value is dropped.
  virtual void send(int status, std::string content_type, std::string body,
                    header_list extra_headers = {}) = 0;
  // Chunked transfer (read to close for an HTTP/1.0 client), with extra_headers as for send().
  // Each write_chunk goes to the socket as soon as the one before it has; an empty chunk is
  // ignored. A client that reads too slowly (more than max_stream_buffer_bytes of the stream
  // written and not yet taken by the socket) is closed: the exchange is gone, as for a
  // disconnect.
  virtual void start_stream(int status, std::string content_type,
                            header_list extra_headers = {}) = 0;
  virtual void write_chunk(std::string data) = 0;
  virtual void end_stream() = 0;
  // fn is called once, on the I/O thread, if the client goes away (connection closed or reset,
  // a write failed, or stop() gave up waiting) before the response is complete, for a
  // streaming or a non-streaming request. If already gone, it is called right away: inline
  // when called on the I/O thread, else as soon as the I/O thread takes the post (and inline
  // on the caller's thread once the server has stopped). Never called once the response is
  // complete. Used to cancel the work. fn must not throw.
  virtual void on_disconnect(std::function<void()> fn) = 0;
  // True once the client went away before the response was complete.
  virtual bool disconnected() const = 0;
  // The request's id (request::id); empty from a writer that is not the server's.
  virtual std::string request_id() const { return {}; }
};

// Called on the I/O thread for every complete request; must not block. An exception it throws
// becomes a 500 unless it had already answered.
using handler = std::function<void(request, std::shared_ptr<response_writer>)>;

struct server_options {
  std::string host = "127.0.0.1";  // an address or a name to resolve
  std::uint16_t port = 8000;       // 0: any free port, see server::port()
  std::size_t max_body_bytes = 16 << 20;
  std::size_t max_header_bytes = 64 << 10;
  int read_timeout_s = 60;  // time to read one request, counted from the end of the previous
                            // response (so it is also the keep-alive idle timeout)
  // Most bytes of a stream queued and not yet taken by the socket; past it the client is too
  // slow (or does not read) and is closed. 0: unbounded.
  std::size_t max_stream_buffer_bytes = 8 << 20;
  // Origins whose browsers may read responses (CORS): exact origins ("https://app.example"),
  // or "*" for any. Empty: no CORS headers. See cors.hpp.
  std::vector<std::string> cors_allowed_origins;
};

class server {
 public:
  server(server_options opts, handler h);
  ~server();  // stop()
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  // Binds (std::runtime_error with a clear message if the port is taken or the host is bad)
  // and starts the I/O thread. Once only: a stopped server is not restarted.
  void start();
  // The bound port (useful with port 0); 0 before start().
  std::uint16_t port() const;
  // Graceful: stop accepting, close idle connections, let in-flight responses finish for up to
  // `grace`, then close everything (on_disconnect fires for what is left) and join the I/O
  // thread. Idempotent. Must not be called on the I/O thread (std::logic_error).
  void stop(std::chrono::milliseconds grace = std::chrono::seconds(10));
  // Requests handed to the handler whose response is not completely written.
  std::size_t num_in_flight() const;
  // Streams closed because their client fell more than max_stream_buffer_bytes behind.
  std::uint64_t num_overflow_closes() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;  // Owned
};

}  // namespace courier::http
