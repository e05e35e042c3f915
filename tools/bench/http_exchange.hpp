#pragma once
// One HTTP/1.1 request on a connection of its own, with the response body handed up as it
// arrives (chunked framing removed), and one deadline for the whole exchange from connect to
// the last byte. Beast is compiled in http_exchange.cpp alone; this header needs only Asio.
//
// A connection per request, as vLLM's client makes a session per request: nothing one request
// does (a server closing its connection, a stalled stream) can delay another, and the
// connect time is part of each request's TTFT, as it is in vLLM's numbers.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace courier::bench_tool {

using endpoint_list = std::vector<boost::asio::ip::tcp::endpoint>;

struct http_call {
  std::string method = "POST";  // POST or GET
  std::string target;           // "/v1/completions"
  std::string host_header;
  std::string body;     // sent as application/json when non-empty
  std::string api_key;  // empty: no Authorization header
  double timeout_s = 600;
};

// Called on the io_context's thread. on_status and on_body are never called after on_done.
struct http_handlers {
  std::function<void(int status)> on_status;              // once, when the head is read
  std::function<void(std::string_view bytes)> on_body;    // body bytes, as they arrive
  std::function<void(const std::string& error)> on_done;  // exactly once; empty: complete
};

// Starts the exchange; it keeps itself alive until on_done. Never calls a handler from
// inside this call.
void start_http_call(boost::asio::io_context& io, const endpoint_list& endpoints, http_call call,
                     http_handlers handlers);

// Resolves HOST and PORT (blocking: once per run). An empty list and `error` set on failure.
endpoint_list resolve_endpoints(const std::string& host, const std::string& port,
                                std::string& error);

}  // namespace courier::bench_tool
