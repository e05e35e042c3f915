#include "actors/admission/http/server.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <vector>

#include "actors/admission/http/connection.hpp"
#include "actors/admission/http/io_gate.hpp"

namespace courier::http {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

// After an accept error (out of file descriptors, say), wait before trying again rather than
// spin.
constexpr auto accept_retry_delay = std::chrono::milliseconds(50);
// How much longer than the grace period stop() waits for the I/O thread before it stops the
// io_context outright. Only a bug would need it.
constexpr auto stop_margin = std::chrono::seconds(5);

}  // namespace

// Everything but the lifecycle members runs on the I/O thread. Members are destroyed in
// reverse order, so the io_context (first) outlives every socket and timer.
struct server::impl {
  net::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  net::steady_timer accept_retry{ioc};
  net::steady_timer grace_timer{ioc};
  connection_hub hub;
  // Owned: every open connection. A connection leaves when it closes; its pending operations
  // keep it alive until they complete.
  std::unordered_map<connection*, std::shared_ptr<connection>> connections;
  bool finishing = false;

  // Lifecycle, from the threads that call start() and stop().
  std::mutex lifecycle_mutex;
  bool started = false;
  std::thread io_thread;
  std::promise<void> io_done;
  std::atomic<std::uint16_t> bound_port{0};

  impl(server_options opts, handler h) {
    hub.opts = std::move(opts);
    hub.cors = cors_policy(hub.opts.cors_allowed_origins);
    hub.on_request = std::move(h);
    hub.gate = std::make_shared<io_gate>(ioc);
    hub.on_closed = [this](connection* c) { connections.erase(c); };
    hub.on_exchange_done = [this] {
      if (hub.stopping && hub.num_in_flight.load() == 0) finish();
    };
  }

  void bind() {
    const auto& host = hub.opts.host;
    std::string where = host + ":" + std::to_string(hub.opts.port);
    error_code ec;
    tcp::resolver resolver(ioc);
    auto results = resolver.resolve(host, std::to_string(hub.opts.port),
                                    tcp::resolver::passive | tcp::resolver::numeric_service, ec);
    if (ec || results.empty()) {
      throw std::runtime_error("http server: cannot resolve host '" + host +
                               "': " + (ec ? ec.message() : std::string("no address")));
    }
    tcp::endpoint endpoint = results.begin()->endpoint();
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (ec) {
      error_code ignored;
      acceptor.close(ignored);
      std::string hint = ec == net::error::address_in_use ? " (is another server using it?)"
                         : ec == boost::system::errc::address_not_available
                             ? " (the host is not an address of this machine)"
                             : "";
      throw std::runtime_error("http server: cannot listen on " + where + ": " + ec.message() +
                               hint);
    }
    acceptor.listen(net::socket_base::max_listen_connections, ec);
    if (ec)
      throw std::runtime_error("http server: cannot listen on " + where + ": " + ec.message());
    bound_port = acceptor.local_endpoint().port();
  }

  void accept() {
    acceptor.async_accept([this](error_code ec, tcp::socket socket) {
      if (hub.stopping || ec == net::error::operation_aborted) return;
      if (ec) {
        accept_retry.expires_after(accept_retry_delay);
        accept_retry.async_wait([this](error_code e) {
          if (!e && !hub.stopping) accept();
        });
        return;
      }
      error_code ignored;
      // Small SSE chunks must leave at once, not wait for Nagle's algorithm.
      socket.set_option(tcp::no_delay(true), ignored);
      auto c = make_connection(std::move(socket), hub);
      connections.emplace(c.get(), c);
      c->start();
      accept();
    });
  }

  void begin_stop(std::chrono::milliseconds grace) {
    hub.stopping = true;
    error_code ignored;
    acceptor.close(ignored);
    accept_retry.cancel();
    for (auto& c : snapshot()) c->stop_when_idle();
    if (hub.num_in_flight.load() == 0) return finish();
    grace_timer.expires_after(grace);
    grace_timer.async_wait([this](error_code ec) {
      if (!ec) finish();
    });
  }

  // Closes what is left (on_disconnect runs for unfinished responses) and the gate; the I/O
  // thread's run() then returns once the cancelled operations have completed.
  void finish() {
    if (finishing) return;
    finishing = true;
    grace_timer.cancel();
    for (auto& c : snapshot()) c->close();
    hub.gate->close();
  }

  // Closing a connection erases it from the map: iterate over a copy.
  std::vector<std::shared_ptr<connection>> snapshot() const {
    std::vector<std::shared_ptr<connection>> out;
    out.reserve(connections.size());
    for (const auto& [ptr, c] : connections) out.push_back(c);
    return out;
  }
};

server::server(server_options opts, handler h)
    : impl_(std::make_unique<impl>(std::move(opts), std::move(h))) {}

server::~server() {
  try {
    stop();
  } catch (...) {
    // Only a stop() on the I/O thread throws, and a destructor cannot report it.
  }
}

void server::start() {
  std::lock_guard<std::mutex> lock(impl_->lifecycle_mutex);
  if (impl_->started) throw std::runtime_error("http server: start() called twice");
  impl_->started = true;
  impl_->bind();
  impl_->accept();
  impl_->io_thread = std::thread([i = impl_.get()] {
    i->ioc.run();
    i->io_done.set_value();
  });
}

std::uint16_t server::port() const {
  return impl_->bound_port.load();
}

void server::stop(std::chrono::milliseconds grace) {
  if (impl_->hub.gate->on_io_thread()) {
    throw std::logic_error("http server: stop() called on its own I/O thread");
  }
  std::lock_guard<std::mutex> lock(impl_->lifecycle_mutex);
  if (!impl_->io_thread.joinable()) return;  // never started, or already stopped
  net::post(impl_->ioc, [i = impl_.get(), grace] { i->begin_stop(grace); });
  auto done = impl_->io_done.get_future();
  if (done.wait_for(grace + stop_margin) != std::future_status::ready) impl_->ioc.stop();
  impl_->io_thread.join();
  impl_->hub.gate->close();  // already, unless the io_context had to be stopped
}

std::size_t server::num_in_flight() const {
  return impl_->hub.num_in_flight.load();
}

std::uint64_t server::num_overflow_closes() const {
  return impl_->hub.num_overflow_closes.load();
}

}  // namespace courier::http
