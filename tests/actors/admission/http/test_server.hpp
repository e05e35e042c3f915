#pragma once
// A server on port 0 with a handler the tests steer by target:
//   /echo...   answered at once: "<method> <target> <query> <x-test header>\n<body>"
//   /held...   queued with its writer; the test takes it with next_held() and answers it
//   /throw     the handler throws
//   anything else: 404
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "actors/admission/http/server.hpp"

namespace courier::http::test {

struct held_request {
  request req;
  std::shared_ptr<response_writer> writer;
};

inline std::string echo_of(const request& r) {
  auto it = r.headers.find("x-test");
  std::string x_test = it == r.headers.end() ? "-" : it->second;
  return r.method + " " + r.target + " " + r.query + " " + x_test + "\n" + r.body;
}

class test_server {
 public:
  explicit test_server(server_options opts = {}) : srv(with_port_0(std::move(opts)), handler()) {
    srv.start();
  }
  // Whatever a test left unanswered is abandoned at once rather than waited for.
  ~test_server() { srv.stop(std::chrono::milliseconds(0)); }

  std::uint16_t port() const { return srv.port(); }

  // The next /held request; fails the test after the timeout.
  held_request next_held(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!cv_.wait_for(lock, timeout, [&] { return !held_.empty(); })) {
      throw std::runtime_error("no /held request arrived in time");
    }
    held_request h = std::move(held_.front());
    held_.pop_front();
    return h;
  }

  std::atomic<int> num_handled{0};  // requests the handler saw

  // The thread the handler last ran on.
  std::thread::id handler_thread() {
    std::lock_guard<std::mutex> lock(mutex_);
    return handler_thread_;
  }

 private:
  static server_options with_port_0(server_options opts) {
    opts.port = 0;
    return opts;
  }

  http::handler handler() {
    return [this](request r, std::shared_ptr<response_writer> w) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        handler_thread_ = std::this_thread::get_id();
      }
      ++num_handled;
      if (r.target.rfind("/echo", 0) == 0) {
        w->send(200, "text/plain", echo_of(r));
      } else if (r.target.rfind("/held", 0) == 0) {
        std::lock_guard<std::mutex> lock(mutex_);
        held_.push_back({std::move(r), std::move(w)});
        cv_.notify_all();
      } else if (r.target == "/throw") {
        throw std::runtime_error("handler failure");
      } else {
        w->send(404, "application/json", "{}");
      }
    };
  }

  // Declared before srv: the handler uses them until srv has stopped.
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<held_request> held_;
  std::thread::id handler_thread_;

 public:
  server srv;
};

// Waits (bounded) until pred holds; false if it never did.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

inline std::string get(const std::string& target, const std::string& extra_headers = "") {
  return "GET " + target + " HTTP/1.1\r\nHost: test\r\n" + extra_headers + "\r\n";
}

inline std::string post(const std::string& target, const std::string& body,
                        const std::string& extra_headers = "") {
  return "POST " + target +
         " HTTP/1.1\r\nHost: test\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
         extra_headers + "\r\n" + body;
}

}  // namespace courier::http::test
