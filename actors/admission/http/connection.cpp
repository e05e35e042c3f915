#include "actors/admission/http/connection.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/admission/http/beast_request.hpp"
#include "actors/admission/http/exchange.hpp"
#include "actors/admission/http/exchange_writer.hpp"
#include "actors/admission/http/response_encoder.hpp"
#include "actors/admission/http/wire_format.hpp"

namespace courier::http {
namespace {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

// After a response that closes the connection, how long to keep reading (and discarding) what
// the client still sends, so that closing does not reset the connection before the client has
// read the response (it would, with unread bytes in our receive buffer).
constexpr auto linger_time = std::chrono::seconds(2);
constexpr std::size_t read_chunk_bytes = 4096;

// States of a connection:
//
//   reading ──request read──▶ handling ──response written, keep-alive──▶ reading
//      │                         │
//      │ 400/413/431             │ response written, "Connection: close"
//      ▼                         ▼
//   closing ──error written──▶ lingering ──EOF or linger_time──▶ closed
//
// Any state goes to closed on a read or write error, on EOF or reset from the client, on a
// read timeout while reading, and when the server closes it. "closing" also covers a final
// response being written.
enum class conn_state { reading, handling, closing, lingering, closed };

class http_connection final : public connection,
                              public exchange_sink,
                              public std::enable_shared_from_this<http_connection> {
 public:
  http_connection(tcp::socket socket, connection_hub& hub)
      : socket_(std::move(socket)), hub_(hub), timer_(socket_.get_executor()) {}

  void start() override { begin_reading(); }

  void stop_when_idle() override {
    if (state_ == conn_state::reading) close();
  }

  void close() override {
    if (state_ == conn_state::closed) return;
    auto self = shared_from_this();  // the registry may hold the last reference
    state_ = conn_state::closed;
    stop_timer();
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    queued_.clear();  // writing_ stays until its write completes: the buffers point into it
    unwritten_bytes_ = 0;
    end_exchange(false);
    hub_.on_closed(this);
  }

  void send(const std::shared_ptr<exchange>& ex, int status, std::string content_type,
            std::string body, headers extra) override {
    if (!current(ex)) return;
    queue_response(encoder_->send(status, std::move(content_type), std::move(body),
                                  std::move(extra), hub_.stopping));
  }

  void start_stream(const std::shared_ptr<exchange>& ex, int status, std::string content_type,
                    headers extra) override {
    if (current(ex)) {
      queue_response(encoder_->start_stream(status, std::move(content_type), std::move(extra),
                                            hub_.stopping));
    }
  }

  void write_chunk(const std::shared_ptr<exchange>& ex, std::string data) override {
    if (!current(ex)) return;
    queue_response(encoder_->write_chunk(std::move(data)));
    // A client that does not read would make the stream pile up here without end: past the
    // bound it is treated as gone (on_disconnect cancels the work that feeds the stream).
    const std::size_t limit = hub_.opts.max_stream_buffer_bytes;
    if (limit > 0 && state_ != conn_state::closed && unwritten_bytes_ > limit) {
      hub_.num_overflow_closes.fetch_add(1);
      close();
    }
  }

  void end_stream(const std::shared_ptr<exchange>& ex) override {
    if (current(ex)) queue_response(encoder_->end_stream());
  }

 private:
  bool current(const std::shared_ptr<exchange>& ex) const {
    return state_ == conn_state::handling && ex == exchange_;
  }

  void queue_response(std::optional<out_frame> frame) {
    if (!frame) return;
    if (frame->then_close) state_ = conn_state::closing;
    queue(std::move(*frame));
  }

  // --- reading -------------------------------------------------------------------------

  void begin_reading() {
    state_ = conn_state::reading;
    exchange_.reset();
    encoder_.reset();
    if (hub_.stopping) {
      close();
      return;
    }
    if (hub_.opts.read_timeout_s > 0) start_timer(std::chrono::seconds(hub_.opts.read_timeout_s));
    if (!read_pending_) {
      read_header();
    } else if (buffer_.size() > 0) {
      // The watch read would sit on bytes already here; on_read_some starts the parse.
      error_code ignored;
      socket_.cancel(ignored);
    }
  }

  void read_header() {
    parser_.emplace();
    parser_->body_limit(hub_.opts.max_body_bytes);
    parser_->header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(
        hub_.opts.max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
    read_pending_ = true;
    bhttp::async_read_header(
        socket_, buffer_, *parser_,
        [self = shared_from_this()](error_code ec, std::size_t) { self->on_header(ec); });
  }

  void on_header(error_code ec) {
    read_pending_ = false;
    if (state_ == conn_state::closed) return;
    if (ec) return on_read_error(ec);
    auto& msg = parser_->get();
    if (msg.version() != 10 && msg.version() != 11) {
      return reply_error_and_close(400, "unsupported HTTP version");
    }
    if (parser_->is_done()) return dispatch_request();
    if (msg.version() == 11 && boost::beast::iequals(msg[bhttp::field::expect], "100-continue")) {
      queue({std::string(continue_100), {}, {}, false, false});  // then the body
    }
    read_pending_ = true;
    bhttp::async_read(socket_, buffer_, *parser_,
                      [self = shared_from_this()](error_code ec2, std::size_t) {
                        self->read_pending_ = false;
                        if (self->state_ == conn_state::closed) return;
                        if (ec2) return self->on_read_error(ec2);
                        self->dispatch_request();
                      });
  }

  void on_read_error(error_code ec) {
    // EOF before or inside a request, a reset, or our own close: nobody to answer.
    if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message ||
        ec.category() != bhttp::make_error_code(bhttp::error::bad_target).category()) {
      parser_.reset();
      return close();
    }
    // The id and CORS headers of the error answer, from the header fields read so far (all of
    // them for a 413: Beast checks Content-Length against the limit once the header is complete).
    headers transport_headers = parser_ ? transport_headers_for(parser_->get())
                                        : with_request_id(hub_.ids.id_for({}), {});
    parser_.reset();
    if (ec == bhttp::error::body_limit) {
      return reply_error_and_close(413,
                                   "request body is larger than " +
                                       std::to_string(hub_.opts.max_body_bytes) + " bytes",
                                   std::move(transport_headers));
    }
    if (ec == bhttp::error::header_limit) {
      return reply_error_and_close(431,
                                   "request header is larger than " +
                                       std::to_string(hub_.opts.max_header_bytes) + " bytes",
                                   std::move(transport_headers));
    }
    reply_error_and_close(400, "malformed HTTP request: " + ec.message(),
                          std::move(transport_headers));
  }

  void reply_error_and_close(int status, const std::string& message,
                             headers transport_headers = {}) {
    // A client that does not read the answer (it may still be sending) is dropped after this.
    start_timer(linger_time);
    state_ = conn_state::closing;
    queue(error_frame(status, message, std::move(transport_headers)));
  }

  template <class Message, class Field>
  static std::string_view field_of(const Message& msg, Field f) {
    auto it = msg.find(f);
    if (it == msg.end()) return {};
    return {it->value().data(), it->value().size()};
  }
  template <class Message>
  static std::string_view origin_of(const Message& msg) {
    return field_of(msg, bhttp::field::origin);
  }

  static headers with_request_id(const std::string& id, headers h) {
    h.emplace_back("x-request-id", id);  // OpenAI's name
    h.emplace_back("request-id", id);    // Anthropic's
    return h;
  }
  // The transport's headers of every response to msg (read whole or in part): its id's, which
  // becomes request_id_, and CORS's.
  template <class Message>
  headers transport_headers_for(const Message& msg) {
    request_id_ = hub_.ids.id_for(field_of(msg, "x-request-id"));
    return with_request_id(request_id_, hub_.cors.response_headers(origin_of(msg)));
  }

  void dispatch_request() {
    stop_timer();
    auto msg = parser_->release();
    parser_.reset();
    encoder_.emplace(request_traits{msg.version() == 10, msg.method() == bhttp::verb::head,
                                    msg.keep_alive(), transport_headers_for(msg)});
    exchange_ = std::make_shared<exchange>();
    state_ = conn_state::handling;
    hub_.num_in_flight.fetch_add(1);
    std::weak_ptr<exchange_sink> sink = shared_from_this();
    std::shared_ptr<response_writer> writer =
        std::make_shared<exchange_writer>(hub_.gate, sink, exchange_, request_id_);
    read_some();  // notices a client that goes away while the handler works
    try {
      request r = to_request(std::move(msg));
      r.id = request_id_;
      hub_.on_request(std::move(r), writer);
    } catch (...) {
      // Queued after anything the handler sent before throwing, so a real answer wins.
      writer->send(500, "application/json", error_json(500, "the request handler failed"));
    }
  }

  // The read that is out while no request is being parsed: while handling or closing it
  // notices EOF or a reset at once (and keeps pipelined bytes for the next request); while
  // lingering it drains what the client still sends.
  void read_some() {
    if (read_pending_) return;
    bool keeps_bytes = state_ == conn_state::handling || state_ == conn_state::closing;
    // A client that pipelines more than a whole request ahead is not read from until the
    // response is written; a write error still notices it going away.
    if (keeps_bytes && buffer_.size() >= hub_.opts.max_header_bytes + hub_.opts.max_body_bytes) {
      return;
    }
    read_pending_ = true;
    socket_.async_read_some(
        buffer_.prepare(read_chunk_bytes),
        [self = shared_from_this()](error_code ec, std::size_t n) { self->on_read_some(ec, n); });
  }

  void on_read_some(error_code ec, std::size_t n) {
    read_pending_ = false;
    if (state_ == conn_state::closed) return;
    if (!ec) buffer_.commit(n);
    if (ec && !(ec == net::error::operation_aborted && state_ == conn_state::reading)) {
      return close();  // EOF or reset: the client went away
    }
    switch (state_) {
      case conn_state::reading:
        return read_header();
      case conn_state::handling:
      case conn_state::closing:
        return read_some();
      case conn_state::lingering:
        buffer_.consume(buffer_.size());
        return read_some();
      case conn_state::closed:
        return;
    }
  }

  // --- writing -------------------------------------------------------------------------

  void queue(out_frame frame) {
    unwritten_bytes_ += frame.head.size() + frame.body.size() + frame.tail.size();
    queued_.push_back(std::move(frame));
    flush();
  }

  // Never two writes in flight: what is queued meanwhile goes out when the write completes.
  void flush() {
    if (write_pending_ || queued_.empty() || state_ == conn_state::closed) return;
    writing_ = std::move(queued_);
    queued_.clear();
    buffers_.clear();
    for (const auto& f : writing_) {
      if (!f.head.empty()) buffers_.emplace_back(f.head.data(), f.head.size());
      if (!f.body.empty()) buffers_.emplace_back(f.body.data(), f.body.size());
      if (!f.tail.empty()) buffers_.emplace_back(f.tail.data(), f.tail.size());
    }
    write_pending_ = true;
    net::async_write(socket_, buffers_, [self = shared_from_this()](error_code ec, std::size_t) {
      self->on_written(ec);
    });
  }

  void on_written(error_code ec) {
    write_pending_ = false;
    if (state_ == conn_state::closed) return;
    if (ec) return close();  // a write error is a disconnect
    bool ended = false;
    bool then_close = false;
    for (const auto& f : writing_) {
      ended = ended || f.ends_response;
      then_close = then_close || f.then_close;
      unwritten_bytes_ -= f.head.size() + f.body.size() + f.tail.size();
    }
    writing_.clear();
    if (ended) end_exchange(true);
    if (state_ == conn_state::closed) return;  // a stopping server closed us on that
    if (then_close) return begin_lingering();
    if (ended) return begin_reading();
    flush();
  }

  void begin_lingering() {
    state_ = conn_state::lingering;
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    buffer_.consume(buffer_.size());
    start_timer(linger_time);
    read_some();
  }

  // --- the exchange and the timer ------------------------------------------------------

  // Ends the current exchange once: written (finished) or not (gone: on_disconnect runs).
  void end_exchange(bool written) {
    if (!exchange_ || exchange_->state() != exchange_state::open) return;
    auto ex = exchange_;
    // Counted out first, so that on_disconnect callbacks already see it gone.
    hub_.num_in_flight.fetch_sub(1);
    if (written) {
      ex->finish();
    } else {
      ex->mark_gone();
    }
    hub_.on_exchange_done();
  }

  void start_timer(std::chrono::steady_clock::duration d) {
    std::uint64_t seq = ++timer_seq_;
    timer_.expires_after(d);
    timer_.async_wait([self = shared_from_this(), seq](error_code ec) {
      // Armed only while reading a request, writing an error answer, and lingering.
      if (!ec && seq == self->timer_seq_) self->close();
    });
  }

  void stop_timer() {
    ++timer_seq_;
    timer_.cancel();
  }

  tcp::socket socket_;
  connection_hub& hub_;  // Borrowed from the server, which outlives every connection's I/O
  conn_state state_ = conn_state::reading;
  boost::beast::flat_buffer buffer_;  // received and not yet parsed (pipelined bytes wait here)
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;  // while reading a request
  std::string request_id_;  // the request's being answered, or last read
  bool read_pending_ = false;    // a parse or a read_some is out (never more than one read)
  net::steady_timer timer_;      // the read timeout, then the linger time
  std::uint64_t timer_seq_ = 0;  // a timer completion acts only if it is the latest wait's

  std::shared_ptr<exchange> exchange_;       // the request being answered; null while reading
  std::optional<response_encoder> encoder_;  // the current request's; null while reading

  std::deque<out_frame> queued_;   // not yet handed to a write
  std::deque<out_frame> writing_;  // in the write in flight; buffers_ points into it
  std::vector<net::const_buffer> buffers_;
  std::size_t unwritten_bytes_ = 0;  // of the frames in queued_ and writing_
  bool write_pending_ = false;
};

}  // namespace

std::shared_ptr<connection> make_connection(tcp::socket socket, connection_hub& hub) {
  return std::make_shared<http_connection>(std::move(socket), hub);
}

}  // namespace courier::http
