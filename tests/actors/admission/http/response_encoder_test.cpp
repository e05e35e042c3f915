// A handler's answer as frames: the order a response allows, and how HTTP/1.0, HEAD,
// keep-alive and a stopping server change the framing.
#include <catch2/catch.hpp>

#include "actors/admission/http/response_encoder.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_http_response_encoder {

using namespace courier::http;

namespace {

bool has(const std::string& head, const std::string& line) {
  return head.find(line + "\r\n") != std::string::npos;
}

}  // namespace

TEST_CASE("response encoder: send is one frame that ends the response and keeps the connection",
          "[http]") {
  response_encoder enc(request_traits{});
  auto f = enc.send(200, "text/plain", "hello", {}, false);
  REQUIRE(f);
  CHECK(has(f->head, "Content-Length: 5"));
  CHECK(f->body == "hello");
  CHECK(f->ends_response);
  CHECK_FALSE(f->then_close);
  // Anything after the answer is ignored.
  CHECK_FALSE(enc.send(200, "text/plain", "again", {}, false));
  CHECK_FALSE(enc.start_stream(200, "text/plain", {}, false));
  CHECK_FALSE(enc.write_chunk("x"));
  CHECK_FALSE(enc.end_stream());
}

TEST_CASE("response encoder: a stream is a head, chunks, and the last chunk", "[http]") {
  response_encoder enc(request_traits{});
  CHECK_FALSE(enc.write_chunk("early"));  // before start_stream
  CHECK_FALSE(enc.end_stream());
  auto head = enc.start_stream(200, "text/event-stream", {}, false);
  REQUIRE(head);
  CHECK(has(head->head, "Transfer-Encoding: chunked"));
  CHECK_FALSE(head->ends_response);
  auto chunk = enc.write_chunk("data: 1\n\n");
  REQUIRE(chunk);
  CHECK(chunk->head + chunk->body + std::string(chunk->tail) == "9\r\ndata: 1\n\n\r\n");
  CHECK_FALSE(enc.write_chunk(""));  // would read as the end of the body
  CHECK_FALSE(enc.send(200, "text/plain", "x", {}, false));
  auto last = enc.end_stream();
  REQUIRE(last);
  CHECK(last->head == "0\r\n\r\n");
  CHECK(last->ends_response);
  CHECK_FALSE(last->then_close);
  CHECK_FALSE(enc.end_stream());
}

TEST_CASE("response encoder: a stopping server or a closing client closes after the response",
          "[http]") {
  response_encoder stopping(request_traits{});
  auto f = stopping.send(200, "text/plain", "x", {}, true);
  CHECK(has(f->head, "Connection: close"));
  CHECK(f->then_close);

  response_encoder client_closes(request_traits{false, false, false});
  REQUIRE(client_closes.start_stream(200, "text/event-stream", {}, false));
  auto last = client_closes.end_stream();
  CHECK(last->then_close);
}

TEST_CASE("response encoder: HTTP/1.0 streams raw bytes and ends by closing", "[http]") {
  response_encoder enc(request_traits{true, false, true});
  auto head = enc.start_stream(200, "text/event-stream", {}, false);
  CHECK_FALSE(has(head->head, "Transfer-Encoding: chunked"));
  CHECK(has(head->head, "Connection: close"));
  auto chunk = enc.write_chunk("data: 1\n\n");
  CHECK(chunk->head + chunk->body + std::string(chunk->tail) == "data: 1\n\n");
  auto last = enc.end_stream();
  CHECK(last->head.empty());
  CHECK(last->then_close);
}

TEST_CASE("response encoder: HEAD gets the head a GET would get and no body", "[http]") {
  response_encoder enc(request_traits{false, true, true});
  auto f = enc.send(200, "text/plain", "hello", {}, false);
  CHECK(has(f->head, "Content-Length: 5"));
  CHECK(f->body.empty());

  response_encoder stream(request_traits{false, true, true});
  REQUIRE(stream.start_stream(200, "text/event-stream", {}, false));
  CHECK_FALSE(stream.write_chunk("data"));
  auto last = stream.end_stream();
  CHECK(last->head.empty());
  CHECK(last->ends_response);
}

TEST_CASE("response encoder: the transport's error frame is JSON and closes", "[http]") {
  out_frame f = error_frame(413, "too big");
  CHECK(f.head.rfind("HTTP/1.1 413 Content Too Large\r\n", 0) == 0);
  CHECK(has(f.head, "Content-Type: application/json"));
  CHECK(has(f.head, "Connection: close"));
  CHECK(has(f.head, "Content-Length: " + std::to_string(f.body.size())));
  CHECK(f.body == R"({"error":{"message":"too big","type":"invalid_request_error","param":null,"code":null}})");
  CHECK(f.then_close);
  CHECK_FALSE(f.ends_response);
}

}  // namespace courier_test_actors_admission_http_response_encoder
