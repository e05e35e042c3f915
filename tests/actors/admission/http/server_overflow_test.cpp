// A stream whose client does not read: past max_stream_buffer_bytes queued and unwritten, the
// exchange is gone exactly as for a disconnect (on_disconnect runs, the connection closes) and
// the server counts it; a client that keeps reading is never cut, however long the stream.
#include <catch2/catch.hpp>

#include <future>
#include <thread>

#include "tests/actors/admission/http/raw_client.hpp"
#include "tests/actors/admission/http/test_server.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_http_server_overflow {

using namespace courier::http;
using namespace courier::http::test;

namespace {

constexpr std::size_t chunk_bytes = 16 << 10;
constexpr int max_chunks = 4096;  // 64 MiB: far past the kernel's socket buffers

}  // namespace

TEST_CASE("http server: a stream whose client never reads is closed past max_stream_buffer_bytes",
          "[http]") {
  server_options opts;
  opts.max_stream_buffer_bytes = 64 << 10;
  test_server ts(opts);
  raw_client c(ts.port(), std::chrono::seconds(5), 4096);  // tiny window, and never read
  c.write(get("/held/stream"));
  held_request h = ts.next_held();
  // Shared: should the test fail, the callback still runs when the server stops, later.
  auto gone = std::make_shared<std::promise<std::thread::id>>();
  auto fired = gone->get_future();
  h.writer->on_disconnect([gone] { gone->set_value(std::this_thread::get_id()); });
  std::thread producer([w = h.writer] {
    w->start_stream(200, "text/event-stream");
    for (int i = 0; i < max_chunks && !w->disconnected(); ++i) {
      w->write_chunk(std::string(chunk_bytes, 'x'));
    }
  });
  const bool disconnected = fired.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  producer.join();
  REQUIRE(disconnected);
  CHECK(fired.get() == ts.handler_thread());  // on the I/O thread, as for a client going away
  CHECK(h.writer->disconnected());
  CHECK(ts.srv.num_overflow_closes() == 1);
  CHECK(ts.srv.num_in_flight() == 0);
  h.writer->write_chunk("late");  // ignored
  h.writer->end_stream();

  raw_client other(ts.port());  // the server is unharmed
  other.write(get("/echo"));
  CHECK(other.read_reply().status == 200);
  CHECK(ts.srv.num_overflow_closes() == 1);
}

TEST_CASE("http server: a stream longer than max_stream_buffer_bytes reaches a reading client",
          "[http]") {
  server_options opts;
  opts.max_stream_buffer_bytes = 64 << 10;
  test_server ts(opts);
  raw_client c(ts.port());
  c.write(get("/held/stream"));
  held_request h = ts.next_held();
  h.writer->start_stream(200, "text/event-stream");
  c.read_head();
  const int num_chunks = 64;  // 1 MiB in all, 16 times the bound
  for (int i = 0; i < num_chunks; ++i) {
    const std::string data(chunk_bytes, static_cast<char>('a' + i % 26));
    h.writer->write_chunk(data);
    REQUIRE(c.read_chunk() == data);
  }
  h.writer->end_stream();
  CHECK(c.read_chunk() == std::nullopt);
  CHECK_FALSE(h.writer->disconnected());
  CHECK(ts.srv.num_overflow_closes() == 0);
}

}  // namespace courier_test_actors_admission_http_server_overflow
