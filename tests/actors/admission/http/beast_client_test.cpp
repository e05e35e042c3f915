// The server's hand-written output read by an independent HTTP implementation: Beast's own
// client-side parser, over a tcp_stream whose timeout bounds every operation.
#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <optional>
#include <thread>

#include "tests/actors/admission/http/test_server.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_http_beast_client {

using namespace courier::http;
using namespace courier::http::test;

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using error_code = boost::system::error_code;

// A synchronous Beast client: each call runs one async operation to completion, so the
// stream's timeout applies (Beast's synchronous calls have none).
class beast_client {
 public:
  explicit beast_client(std::uint16_t port) : stream_(ioc_) {
    run([&](auto done) {
      stream_.async_connect({net::ip::make_address("127.0.0.1"), port},
                            [done](error_code ec) { done(ec); });
    });
  }

  void write(bhttp::request<bhttp::string_body> req) {
    req.prepare_payload();
    run([&](auto done) {
      bhttp::async_write(stream_, req, [done](error_code ec, std::size_t) { done(ec); });
    });
  }

  bhttp::response<bhttp::string_body> read() {
    bhttp::response<bhttp::string_body> res;
    run([&](auto done) {
      bhttp::async_read(stream_, buffer_, res, [done](error_code ec, std::size_t) { done(ec); });
    });
    return res;
  }

  // A chunked response, chunk by chunk as the parser reports them.
  std::vector<std::string> read_chunks() {
    bhttp::response_parser<bhttp::empty_body> parser;
    std::vector<std::string> chunks;
    // The parser keeps references to these: they must outlive the read.
    std::function<void(std::uint64_t, beast::string_view, error_code&)> on_header =
        [&](std::uint64_t size, beast::string_view, error_code&) {
          if (size > 0) chunks.emplace_back();
        };
    std::function<std::size_t(std::uint64_t, beast::string_view, error_code&)> on_body =
        [&](std::uint64_t, beast::string_view body, error_code&) {
          chunks.back().append(body.data(), body.size());
          return body.size();
        };
    parser.on_chunk_header(on_header);
    parser.on_chunk_body(on_body);
    run([&](auto done) {
      bhttp::async_read(stream_, buffer_, parser, [done](error_code ec, std::size_t) { done(ec); });
    });
    CHECK(parser.get().chunked());
    return chunks;
  }

 private:
  template <class Start>
  void run(Start start) {
    std::optional<error_code> result;
    stream_.expires_after(std::chrono::seconds(5));
    start([&](error_code ec) { result = ec; });
    ioc_.restart();
    ioc_.run();
    REQUIRE(result.has_value());
    REQUIRE_FALSE(*result);
  }

  net::io_context ioc_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
};

bhttp::request<bhttp::string_body> make_request(bhttp::verb verb, const std::string& target,
                                                std::string body = "") {
  bhttp::request<bhttp::string_body> req{verb, target, 11};
  req.set(bhttp::field::host, "test");
  req.body() = std::move(body);
  return req;
}

}  // namespace

TEST_CASE("http server: Beast's parser reads whole responses on a keep-alive connection",
          "[http]") {
  test_server ts;
  beast_client c(ts.port());
  c.write(make_request(bhttp::verb::get, "/echo/a?b=c"));
  auto r1 = c.read();
  CHECK(r1.result_int() == 200);
  CHECK(r1.body() == "GET /echo/a b=c -\n");
  CHECK(r1[bhttp::field::server] == "courier");
  CHECK(r1.keep_alive());
  c.write(make_request(bhttp::verb::post, "/echo", "payload"));
  auto r2 = c.read();
  CHECK(r2.body() == "POST /echo  -\npayload");
}

TEST_CASE("http server: Beast's parser reads a chunked stream as the chunks written", "[http]") {
  test_server ts;
  beast_client c(ts.port());
  c.write(make_request(bhttp::verb::post, "/held/stream", "{}"));
  held_request h = ts.next_held();
  h.writer->start_stream(200, "text/event-stream");
  h.writer->write_chunk("data: {\"a\":1}\n\n");
  h.writer->write_chunk("data: {\"b\":2}\n\n");
  h.writer->write_chunk("data: [DONE]\n\n");
  h.writer->end_stream();
  // One chunk per write_chunk, even when they leave in one write.
  CHECK(c.read_chunks() ==
        std::vector<std::string>{"data: {\"a\":1}\n\n", "data: {\"b\":2}\n\n", "data: [DONE]\n\n"});
  c.write(make_request(bhttp::verb::get, "/echo"));  // and the connection is kept
  CHECK(c.read().body() == "GET /echo  -\n");
}

TEST_CASE("http server: Beast's parser reads the 413 error response", "[http]") {
  server_options opts;
  opts.max_body_bytes = 10;
  test_server ts(opts);
  beast_client c(ts.port());
  c.write(make_request(bhttp::verb::post, "/echo", std::string(11, 'x')));
  auto r = c.read();
  CHECK(r.result_int() == 413);
  CHECK_FALSE(r.keep_alive());
  CHECK(
      r.body() ==
      R"({"error":{"message":"request body is larger than 10 bytes","type":"invalid_request_error","param":null,"code":null}})");
}

}  // namespace courier_test_actors_admission_http_beast_client
