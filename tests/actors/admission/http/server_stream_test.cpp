// Streaming responses and the disconnect contract: chunks reach the client as they are written,
// on_disconnect fires once when a client goes away before its response is complete, and a
// writer stays harmless to call afterwards.
#include <catch2/catch.hpp>

#include <future>
#include <memory>
#include <vector>

#include "tests/actors/admission/http/raw_client.hpp"
#include "tests/actors/admission/http/test_server.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_http_server_stream {

using namespace courier::http;
using namespace courier::http::test;

namespace {

// Records on_disconnect calls: how many, and on which thread the first came.
struct disconnect_probe {
  std::atomic<int> num_calls{0};
  std::promise<std::thread::id> first;
  std::future<std::thread::id> fired = first.get_future();

  std::function<void()> callback() {
    return [this] {
      if (++num_calls == 1) first.set_value(std::this_thread::get_id());
    };
  }
};

constexpr auto wait_limit = std::chrono::seconds(5);

}  // namespace

TEST_CASE("http server: each streamed chunk is readable before the next is written", "[http]") {
  test_server ts;
  raw_client c(ts.port());
  c.write(get("/held/stream"));
  held_request h = ts.next_held();
  h.writer->start_stream(200, "text/event-stream");
  h.writer->write_chunk("data: 1\n\n");

  reply head = c.read_head();
  CHECK(head.status == 200);
  CHECK(head.header("content-type") == "text/event-stream");
  CHECK(head.header("transfer-encoding") == "chunked");
  CHECK_FALSE(head.has_header("content-length"));
  CHECK(c.read_chunk() == "data: 1\n\n");

  // Chunk 2 is written only now that the client has read chunk 1.
  h.writer->write_chunk("data: 2\n\n");
  CHECK(c.read_chunk() == "data: 2\n\n");
  h.writer->write_chunk("");  // ignored: an empty chunk would end the body
  h.writer->end_stream();
  CHECK(c.read_chunk() == std::nullopt);
  CHECK(eventually([&] { return ts.srv.num_in_flight() == 0; }));
  CHECK_FALSE(h.writer->disconnected());

  c.write(get("/echo"));  // the connection is kept for the next request
  CHECK(c.read_reply().body == "GET /echo  -\n");
}

TEST_CASE("http server: chunks written quickly from another thread arrive whole and in order",
          "[http]") {
  test_server ts;
  raw_client c(ts.port());
  c.write(get("/held/stream"));
  held_request h = ts.next_held();
  std::thread producer([w = h.writer] {
    w->start_stream(200, "text/event-stream");
    for (int i = 0; i < 2000; ++i) w->write_chunk("data: " + std::to_string(i) + "\n\n");
    w->end_stream();
  });
  reply r = c.read_reply();
  producer.join();
  std::string expected;
  for (int i = 0; i < 2000; ++i) expected += "data: " + std::to_string(i) + "\n\n";
  CHECK(r.body == expected);
}

TEST_CASE("http server: an HTTP/1.0 client gets a stream that ends with the connection", "[http]") {
  test_server ts;
  raw_client c(ts.port());
  c.write("GET /held HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  held_request h = ts.next_held();
  h.writer->start_stream(200, "text/event-stream");
  h.writer->write_chunk("data: a\n\n");
  reply head = c.read_head();
  CHECK_FALSE(head.has_header("transfer-encoding"));
  CHECK(head.header("connection") == "close");
  CHECK(c.read_exactly(9) == "data: a\n\n");
  h.writer->write_chunk("data: b\n\n");
  h.writer->end_stream();
  CHECK(c.read_until_close() == "data: b\n\n");
}

TEST_CASE("http server: on_disconnect fires when the client closes before a pending response",
          "[http]") {
  test_server ts;
  raw_client c(ts.port());
  c.write(post("/held", "{}"));
  held_request h = ts.next_held();
  disconnect_probe probe;
  h.writer->on_disconnect(probe.callback());
  CHECK_FALSE(h.writer->disconnected());
  CHECK(ts.srv.num_in_flight() == 1);

  c.close();
  REQUIRE(probe.fired.wait_for(wait_limit) == std::future_status::ready);
  CHECK(probe.fired.get() == ts.handler_thread());  // on the I/O thread
  CHECK(h.writer->disconnected());
  CHECK(ts.srv.num_in_flight() == 0);

  // Answering now does nothing, and a late on_disconnect is called right away.
  h.writer->send(200, "text/plain", "too late");
  h.writer->start_stream(200, "text/plain");
  h.writer->write_chunk("x");
  h.writer->end_stream();
  std::promise<void> late;
  auto late_fired = late.get_future();
  h.writer->on_disconnect([&] { late.set_value(); });
  CHECK(late_fired.wait_for(wait_limit) == std::future_status::ready);
  CHECK(probe.num_calls == 1);

  raw_client other(ts.port());  // the server is unharmed
  other.write(get("/echo"));
  CHECK(other.read_reply().status == 200);
}

TEST_CASE("http server: on_disconnect fires when the client resets during a stream", "[http]") {
  test_server ts;
  raw_client c(ts.port());
  c.write(get("/held/stream"));
  held_request h = ts.next_held();
  disconnect_probe probe;
  h.writer->on_disconnect(probe.callback());
  h.writer->start_stream(200, "text/event-stream");
  h.writer->write_chunk("data: 1\n\n");
  c.read_head();
  CHECK(c.read_chunk() == "data: 1\n\n");

  SECTION("with a reset") {
    c.reset();
  }
  SECTION("with a half-close, which counts as going away") {
    c.shutdown_write();
  }

  REQUIRE(probe.fired.wait_for(wait_limit) == std::future_status::ready);
  CHECK(h.writer->disconnected());
  for (int i = 0; i < 10; ++i) h.writer->write_chunk("data: more\n\n");
  h.writer->end_stream();
  CHECK(eventually([&] { return ts.srv.num_in_flight() == 0; }));
  CHECK(probe.num_calls == 1);
}

TEST_CASE("http server: on_disconnect never fires for a response that completed", "[http]") {
  test_server ts;
  raw_client c(ts.port());
  c.write(get("/held"));
  held_request h = ts.next_held();
  disconnect_probe probe;
  h.writer->on_disconnect(probe.callback());
  h.writer->send(200, "text/plain", "done");
  CHECK(c.read_reply().body == "done");
  CHECK(eventually([&] { return ts.srv.num_in_flight() == 0; }));
  c.close();
  // The closing is noticed by the next event loop turns; a fresh round trip passes them.
  raw_client other(ts.port());
  other.write(get("/echo"));
  other.read_reply();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(probe.num_calls == 0);
  CHECK_FALSE(h.writer->disconnected());
}

TEST_CASE("http server: a writer kept after the server is gone is harmless", "[http]") {
  std::shared_ptr<response_writer> kept;
  disconnect_probe probe;
  {
    test_server ts;
    raw_client c(ts.port());
    c.write(get("/held"));
    held_request h = ts.next_held();
    kept = h.writer;
    kept->on_disconnect(probe.callback());
  }  // the server stops with the request unanswered: that counts as the client going away
  CHECK(probe.num_calls == 1);
  CHECK(kept->disconnected());
  kept->send(200, "text/plain", "nobody listens");
  kept->start_stream(200, "text/plain");
  kept->write_chunk("x");
  kept->end_stream();
  bool called = false;
  kept->on_disconnect([&] { called = true; });  // no I/O thread left: runs on this thread
  CHECK(called);
}

TEST_CASE("http server: streams cut at any point while another thread writes leave it healthy",
          "[http]") {
  test_server ts;
  constexpr int n = 40;
  constexpr int num_chunks = 200;
  std::vector<std::unique_ptr<raw_client>> clients;
  std::vector<held_request> held;
  for (int i = 0; i < n; ++i) {
    clients.push_back(std::make_unique<raw_client>(ts.port()));
    clients.back()->write(get("/held/stream"));
    held.push_back(ts.next_held());
  }
  std::thread producer([&] {
    for (auto& h : held) h.writer->start_stream(200, "text/event-stream");
    for (int k = 0; k < num_chunks; ++k) {
      for (auto& h : held) h.writer->write_chunk("data: " + std::to_string(k) + "\n\n");
    }
    for (auto& h : held) h.writer->end_stream();
  });
  int num_whole = 0;
  for (int i = 0; i < n; ++i) {
    raw_client& c = *clients[i];
    c.read_head();
    if (i % 4 == 3) {  // reads to the end
      int num_read = 0;
      while (c.read_chunk()) ++num_read;
      num_whole += num_read == num_chunks;
      continue;
    }
    for (int k = 0; k < i % 7; ++k) CHECK(c.read_chunk() == "data: " + std::to_string(k) + "\n\n");
    if (i % 2 == 0) {
      c.reset();
    } else {
      c.close();
    }
  }
  producer.join();
  CHECK(num_whole == n / 4);
  CHECK(eventually([&] { return ts.srv.num_in_flight() == 0; }));
  raw_client after(ts.port());
  after.write(get("/echo"));
  CHECK(after.read_reply().status == 200);
}

}  // namespace courier_test_actors_admission_http_server_stream
