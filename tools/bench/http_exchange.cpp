#include "tools/bench/http_exchange.hpp"

#include <fmt/format.h>

#include <array>
#include <boost/asio/connect.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <chrono>
#include <limits>
#include <memory>

namespace courier::bench_tool {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

// Body bytes are handed up per read; 16 KiB holds many SSE events, and a read returns as soon
// as any bytes arrive, so the size does not delay a timestamp.
constexpr std::size_t body_buffer_bytes = 16 * 1024;

// States: connecting → writing → reading head → reading body → done. Any error, the deadline,
// or the end of the body goes to done, which runs on_done once and closes the socket.
class exchange : public std::enable_shared_from_this<exchange> {
 public:
  exchange(net::io_context& io, http_call call, http_handlers handlers)
      : stream_(io), call_(std::move(call)), handlers_(std::move(handlers)) {}

  void start(const endpoint_list& endpoints) {
    const auto limit = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(call_.timeout_s));
    // One expiry for every operation from here on: a total deadline, not an idle timeout.
    stream_.expires_at(std::chrono::steady_clock::now() + limit);
    build_request();
    stream_.async_connect(
        endpoints,
        [self = shared_from_this()](error_code ec, const tcp::endpoint&) { self->on_connect(ec); });
  }

 private:
  void build_request() {
    request_.method(call_.method == "GET" ? bhttp::verb::get : bhttp::verb::post);
    request_.target(call_.target);
    request_.version(11);
    request_.set(bhttp::field::host, call_.host_header);
    request_.set(bhttp::field::user_agent, "courier-bench");
    request_.set(bhttp::field::accept, "text/event-stream, application/json");
    if (!call_.api_key.empty())
      request_.set(bhttp::field::authorization, "Bearer " + call_.api_key);
    if (!call_.body.empty()) {
      request_.set(bhttp::field::content_type, "application/json");
      request_.body() = call_.body;
    }
    request_.prepare_payload();
  }

  void on_connect(error_code ec) {
    if (ec) return fail("connect", ec);
    error_code ignored;
    stream_.socket().set_option(tcp::no_delay(true), ignored);
    bhttp::async_write(stream_, request_, [self = shared_from_this()](error_code e, std::size_t) {
      self->on_write(e);
    });
  }

  void on_write(error_code ec) {
    if (ec) return fail("write", ec);
    parser_.body_limit(std::numeric_limits<std::uint64_t>::max());  // streams have no bound
    bhttp::async_read_header(
        stream_, buffer_, parser_,
        [self = shared_from_this()](error_code e, std::size_t) { self->on_head(e); });
  }

  void on_head(error_code ec) {
    if (ec) return fail("read response", ec);
    if (handlers_.on_status) handlers_.on_status(parser_.get().result_int());
    read_body();
  }

  void read_body() {
    if (parser_.is_done()) return finish("");
    auto& body = parser_.get().body();
    body.data = chunk_.data();
    body.size = chunk_.size();
    body.more = true;
    bhttp::async_read_some(
        stream_, buffer_, parser_,
        [self = shared_from_this()](error_code e, std::size_t) { self->on_body(e); });
  }

  void on_body(error_code ec) {
    const std::size_t n = chunk_.size() - parser_.get().body().size;
    if (n > 0 && handlers_.on_body) handlers_.on_body(std::string_view(chunk_.data(), n));
    if (ec == bhttp::error::need_buffer) ec = {};
    if (ec) return fail("read body", ec);
    read_body();
  }

  void fail(const char* stage, error_code ec) {
    if (ec == beast::error::timeout) {
      return finish(fmt::format("timed out after {} s ({})", call_.timeout_s, stage));
    }
    if (ec == bhttp::error::partial_message || ec == bhttp::error::end_of_stream ||
        ec == net::error::eof) {
      return finish(
          fmt::format("{}: the server closed the connection before the response ended", stage));
    }
    finish(fmt::format("{}: {}", stage, ec.message()));
  }

  void finish(const std::string& error) {
    error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
    auto done = std::move(handlers_.on_done);
    handlers_ = {};  // release what the handlers captured
    if (done) done(error);
  }

  beast::tcp_stream stream_;
  http_call call_;
  http_handlers handlers_;
  bhttp::request<bhttp::string_body> request_;
  beast::flat_buffer buffer_;
  bhttp::response_parser<bhttp::buffer_body> parser_;
  std::array<char, body_buffer_bytes> chunk_{};
};

}  // namespace

void start_http_call(net::io_context& io, const endpoint_list& endpoints, http_call call,
                     http_handlers handlers) {
  std::make_shared<exchange>(io, std::move(call), std::move(handlers))->start(endpoints);
}

endpoint_list resolve_endpoints(const std::string& host, const std::string& port,
                                std::string& error) {
  net::io_context io;
  tcp::resolver resolver(io);
  error_code ec;
  const auto results = resolver.resolve(host, port, ec);
  endpoint_list out;
  if (ec) {
    error = fmt::format("resolve {}:{}: {}", host, port, ec.message());
    return out;
  }
  for (const auto& r : results) out.push_back(r.endpoint());
  if (out.empty()) error = fmt::format("resolve {}:{}: no address", host, port);
  return out;
}

}  // namespace courier::bench_tool
