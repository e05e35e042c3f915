// The server's lifecycle: binding errors, many connections at once, and a graceful stop().
#include <catch2/catch.hpp>

#include <future>
#include <memory>
#include <vector>

#include "tests/actors/admission/http/raw_client.hpp"
#include "tests/actors/admission/http/test_server.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_http_server_lifecycle {

using namespace courier::http;
using namespace courier::http::test;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

server_options on_port(std::uint16_t port, std::string host = "127.0.0.1") {
  server_options o;
  o.host = std::move(host);
  o.port = port;
  return o;
}

void ignore_requests(request, std::shared_ptr<response_writer>) {}

}  // namespace

TEST_CASE("http server: port 0 binds a free port that port() reports", "[http]") {
  test_server ts;
  CHECK(ts.port() != 0);
  server never_started(on_port(0), ignore_requests);
  CHECK(never_started.port() == 0);
}

TEST_CASE("http server: a taken port or a foreign host is a clear error from start()", "[http]") {
  test_server ts;
  server second(on_port(ts.port()), ignore_requests);
  const std::string where = "127.0.0.1:" + std::to_string(ts.port());
  CHECK_THROWS_WITH(second.start(), Catch::Contains(where) && Catch::Contains("in use"));

  server foreign(on_port(0, "192.0.2.1"), ignore_requests);  // TEST-NET-1, not on this host
  CHECK_THROWS_WITH(foreign.start(), Catch::Contains("192.0.2.1"));

  CHECK_THROWS_AS(ts.srv.start(), std::runtime_error);  // once only
  raw_client c(ts.port());                              // the first server is unharmed
  c.write(get("/echo"));
  CHECK(c.read_reply().status == 200);
}

TEST_CASE("http server: 200 concurrent connections each get their answer", "[http]") {
  test_server ts;
  constexpr int n = 200;
  std::vector<std::unique_ptr<raw_client>> clients;
  for (int i = 0; i < n; ++i) {
    clients.push_back(std::make_unique<raw_client>(ts.port()));
    clients.back()->write(get("/held", "X-Test: " + std::to_string(i) + "\r\n"));
  }
  // All 200 are with the handler at once before any is answered.
  std::vector<held_request> held;
  for (int i = 0; i < n; ++i) held.push_back(ts.next_held());
  CHECK(ts.srv.num_in_flight() == n);
  for (auto& h : held) h.writer->send(200, "text/plain", "for " + h.req.headers.at("x-test"));
  for (int i = 0; i < n; ++i) CHECK(clients[i]->read_reply().body == "for " + std::to_string(i));
  CHECK(eventually([&] { return ts.srv.num_in_flight() == 0; }));
}

TEST_CASE("http server: 200 clients on their own threads all get answers", "[http]") {
  test_server ts;
  std::atomic<int> num_ok{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 200; ++i) {
    threads.emplace_back([&, i] {
      try {
        raw_client c(ts.port());
        c.write(post("/echo", std::to_string(i)));
        if (c.read_reply().body == "POST /echo  -\n" + std::to_string(i)) ++num_ok;
      } catch (...) {
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(num_ok == 200);
}

TEST_CASE("http server: stop() lets an in-flight response finish within the grace period",
          "[http]") {
  test_server ts;
  raw_client idle(ts.port());  // a keep-alive connection with no request: closed at once
  idle.write(get("/echo"));
  idle.read_reply();
  raw_client c(ts.port());
  c.write(get("/held"));
  held_request h = ts.next_held();

  auto start = steady_clock::now();
  auto stopped = std::async(std::launch::async, [&] { ts.srv.stop(std::chrono::seconds(5)); });
  CHECK(idle.closed_by_server());
  // New connections are refused once the listener is closed.
  CHECK(eventually([&] {
    try {
      raw_client late(ts.port());
      return false;
    } catch (const std::runtime_error&) {
      return true;
    }
  }));
  CHECK(ts.srv.num_in_flight() == 1);
  h.writer->send(200, "text/plain", "finished");
  reply r = c.read_reply();
  CHECK(r.body == "finished");
  CHECK(r.header("connection") == "close");  // no more requests on a stopping server
  REQUIRE(stopped.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  CHECK(steady_clock::now() - start < std::chrono::seconds(4));
  CHECK(ts.srv.num_in_flight() == 0);
  CHECK_FALSE(h.writer->disconnected());
}

TEST_CASE("http server: stop() closes what is unfinished after the grace period", "[http]") {
  test_server ts;
  raw_client c(ts.port(), std::chrono::seconds(3));
  c.write(get("/held/stream"));
  held_request h = ts.next_held();
  std::atomic<int> num_disconnects{0};
  h.writer->on_disconnect([&] { ++num_disconnects; });
  h.writer->start_stream(200, "text/event-stream");

  auto start = steady_clock::now();
  ts.srv.stop(milliseconds(200));
  auto took = steady_clock::now() - start;
  CHECK(took >= milliseconds(190));
  CHECK(took < std::chrono::seconds(4));  // the grace period, not the default 10 s
  CHECK(num_disconnects == 1);
  CHECK(h.writer->disconnected());
  CHECK(ts.srv.num_in_flight() == 0);
  c.read_head();
  CHECK_THROWS(c.read_chunk());  // the stream was cut, not ended
}

TEST_CASE("http server: stop() is idempotent and fine before start()", "[http]") {
  server never_started(on_port(0), ignore_requests);
  never_started.stop();
  never_started.stop();

  test_server ts;
  auto start = steady_clock::now();
  ts.srv.stop();
  ts.srv.stop();
  CHECK(steady_clock::now() - start < std::chrono::seconds(8));  // nothing in flight: not the 10 s grace
  CHECK_THROWS_AS(raw_client(ts.port()), std::runtime_error);
}  // and the destructors stop once more

}  // namespace courier_test_actors_admission_http_server_lifecycle
