#pragma once
// A tiny scripted HTTP server for the courier-bench client tests: each request gets the
// response the test's handler scripts (status, SSE chunks with delays before them, a cut or a
// stall), written by hand so that the bytes and their timing are exactly the script's.
//
// A thread per connection with blocking sockets: the simplest way to sleep between chunks.
// Delays and stalls wait on a condition variable, so the destructor ends them at once. The
// server counts requests in flight (from the request read to just before the response's last
// bytes are written, so that the client's next request never overlaps a finished one).
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace courier::test::bench {

struct scripted_step {
  int delay_ms = 0;   // waited before the bytes are written
  std::string bytes;  // one HTTP chunk (for a non-200 status: part of the body)
};

struct scripted_response {
  int status = 200;
  std::vector<scripted_step> steps;
  int stall_ms = 0;             // waited after the steps, before the end
  bool cut_mid_stream = false;  // close without the chunked body's terminator
};

struct seen_request {
  std::string method;
  std::string target;
  std::string authorization;
  nlohmann::json body;  // null when the body is not JSON
};

inline std::string sse(const nlohmann::json& j) {
  return "data: " + j.dump() + "\n\n";
}
inline std::string text_chunk(const std::string& text) {
  return sse({{"choices", {{{"index", 0}, {"text", text}}}}});
}
inline std::string usage_chunk(int prompt, int completion, int cached) {
  return sse({{"choices", nlohmann::json::array()},
              {"usage",
               {{"prompt_tokens", prompt},
                {"completion_tokens", completion},
                {"total_tokens", prompt + completion},
                {"prompt_tokens_details", {{"cached_tokens", cached}}}}}});
}
inline const std::string done_event = "data: [DONE]\n\n";

class fake_sse_server {
 public:
  using handler = std::function<scripted_response(const seen_request&)>;

  explicit fake_sse_server(handler h)
      : handler_(std::move(h)),
        acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}),
        port_(acceptor_.local_endpoint().port()) {
    accept_thread_ = std::thread([this] { accept_loop(); });
  }

  ~fake_sse_server() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    // Wake the blocking accept with a connection of our own.
    boost::system::error_code ignored;
    boost::asio::ip::tcp::socket poke(io_);
    poke.connect({boost::asio::ip::make_address("127.0.0.1"), port_}, ignored);
    accept_thread_.join();
    std::vector<std::thread> threads;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      threads.swap(connections_);
    }
    for (std::thread& t : threads) t.join();
  }

  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  unsigned short port() const { return port_; }
  int max_in_flight() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return max_in_flight_;
  }
  std::vector<seen_request> requests() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return seen_;
  }

 private:
  void accept_loop() {
    for (;;) {
      boost::asio::ip::tcp::socket socket(io_);
      boost::system::error_code ec;
      acceptor_.accept(socket, ec);
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      if (ec) continue;
      connections_.emplace_back([this, s = std::make_shared<boost::asio::ip::tcp::socket>(
                                           std::move(socket))] { serve(*s); });
    }
  }

  // False when the server is stopping.
  bool wait_ms(int ms) {
    std::unique_lock<std::mutex> lock(mutex_);
    return !wake_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopping_; });
  }

  void count_in(const seen_request& r) {
    std::lock_guard<std::mutex> lock(mutex_);
    seen_.push_back(r);
    max_in_flight_ = std::max(max_in_flight_, ++in_flight_);
  }
  void count_out() {
    std::lock_guard<std::mutex> lock(mutex_);
    --in_flight_;
  }

  void serve(boost::asio::ip::tcp::socket& socket) {
    namespace http = boost::beast::http;
    boost::system::error_code ec;
    boost::beast::flat_buffer buffer;
    http::request<http::string_body> req;
    http::read(socket, buffer, req, ec);
    if (ec) return;
    seen_request seen{std::string(req.method_string()), std::string(req.target()),
                      std::string(req[http::field::authorization]),
                      nlohmann::json::parse(req.body(), nullptr, false)};
    if (seen.body.is_discarded()) seen.body = nullptr;
    const scripted_response script = handler_(seen);
    count_in(seen);
    const auto write = [&](const std::string& bytes) {
      boost::asio::write(socket, boost::asio::buffer(bytes), ec);
    };
    if (script.status != 200) {
      std::string body;
      for (const scripted_step& s : script.steps) body += s.bytes;
      count_out();
      write("HTTP/1.1 " + std::to_string(script.status) +
            " Error\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
            std::to_string(body.size()) + "\r\n\r\n" + body);
    } else {
      write(
          "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: "
          "chunked\r\nConnection: close\r\n\r\n");
      bool live = true;
      for (const scripted_step& s : script.steps) {
        if (!(live = wait_ms(s.delay_ms))) break;
        char size_line[32];  // a step's bytes must not be empty: that would end the body
        std::snprintf(size_line, sizeof size_line, "%zx\r\n", s.bytes.size());
        write(size_line + s.bytes + "\r\n");
      }
      if (live && script.stall_ms > 0) wait_ms(script.stall_ms);
      count_out();
      if (!script.cut_mid_stream) write("0\r\n\r\n");
    }
    socket.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
    socket.close(ec);
  }

  handler handler_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  unsigned short port_;
  std::thread accept_thread_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<std::thread> connections_;
  std::vector<seen_request> seen_;
  int in_flight_ = 0;
  int max_in_flight_ = 0;
};

}  // namespace courier::test::bench
