#pragma once
// One accepted TCP connection: it reads requests one at a time, hands each to the handler with
// a writer, and writes the answer. The server owns connections through a registry; everything
// here runs on the I/O thread. Beast stays in connection.cpp.
#include <boost/asio/ip/tcp.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "actors/admission/http/cors.hpp"
#include "actors/admission/http/request_id.hpp"
#include "actors/admission/http/io_gate.hpp"
#include "actors/admission/http/server.hpp"

namespace courier::http {

class connection;

// What the connections share with the server. Invariants: touched only on the I/O thread,
// except num_in_flight (read anywhere); outlives every connection's I/O.
struct connection_hub {
  server_options opts;
  cors_policy cors;  // from opts.cors_allowed_origins
  request_ids ids;   // each request's id
  handler on_request;
  std::shared_ptr<io_gate> gate;
  // Exchanges handed to the handler and not yet finished or gone.
  std::atomic<std::size_t> num_in_flight{0};
  // Streams closed because their client fell more than opts.max_stream_buffer_bytes behind.
  std::atomic<std::uint64_t> num_overflow_closes{0};
  // Set once by stop(): no more requests are read, responses say "Connection: close".
  bool stopping = false;
  // A connection closed: the server drops it from its registry.
  std::function<void(connection*)> on_closed;
  // An exchange ended (written or gone): a stopping server checks whether it is done.
  std::function<void()> on_exchange_done;
};

class connection {
 public:
  virtual ~connection() = default;
  virtual void start() = 0;
  // The server is stopping: close now if no response is owed, else once it is written.
  virtual void stop_when_idle() = 0;
  // Close now; a response in progress is abandoned and its on_disconnect callbacks run.
  virtual void close() = 0;
};

std::shared_ptr<connection> make_connection(boost::asio::ip::tcp::socket socket,
                                            connection_hub& hub);

}  // namespace courier::http
