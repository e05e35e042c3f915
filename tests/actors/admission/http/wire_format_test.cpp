// The bytes of response heads and chunks, and the JSON error bodies, without a socket.
#include <catch2/catch.hpp>

#include "actors/admission/http/wire_format.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_http_wire_format {

using namespace courier::http;

namespace {

// The head with its Date line removed (it changes every second).
std::string without_date(std::string head) {
  auto at = head.find("Date: ");
  REQUIRE(at != std::string::npos);
  head.erase(at, head.find("\r\n", at) + 2 - at);
  return head;
}

}  // namespace

TEST_CASE("wire format: a whole response's head has Server, Content-Type and Content-Length",
          "[http]") {
  response_head h;
  h.status = 200;
  h.content_type = "application/json";
  h.content_length = 42;
  h.extra_headers = {{"X-Request-Id", "r1"}};
  CHECK(without_date(format_head(h)) ==
        "HTTP/1.1 200 OK\r\nServer: courier\r\nContent-Type: application/json\r\n"
        "X-Request-Id: r1\r\nContent-Length: 42\r\n\r\n");
}

TEST_CASE("wire format: the Date header is an IMF-fixdate", "[http]") {
  std::string head = format_head(response_head{});
  auto at = head.find("Date: ");
  REQUIRE(at != std::string::npos);
  std::string date = head.substr(at + 6, head.find("\r\n", at) - at - 6);
  CHECK(date.size() == 29);  // "Sun, 06 Nov 1994 08:49:37 GMT"
  CHECK(date.substr(25) == " GMT");
}

TEST_CASE("wire format: streams are chunked for HTTP/1.1 and read to close for HTTP/1.0",
          "[http]") {
  response_head h;
  h.content_type = "text/event-stream";
  h.framing = body_framing::chunked;
  CHECK(without_date(format_head(h)) ==
        "HTTP/1.1 200 OK\r\nServer: courier\r\nContent-Type: text/event-stream\r\n"
        "Transfer-Encoding: chunked\r\n\r\n");
  h.framing = body_framing::until_close;
  h.http10_client = true;
  CHECK(without_date(format_head(h)) ==
        "HTTP/1.1 200 OK\r\nServer: courier\r\nContent-Type: text/event-stream\r\n"
        "Connection: close\r\n\r\n");
}

TEST_CASE("wire format: Connection says close, or keep-alive to an HTTP/1.0 client", "[http]") {
  response_head h;
  h.status = 413;
  h.keep_alive = false;
  CHECK(without_date(format_head(h)) ==
        "HTTP/1.1 413 Content Too Large\r\nServer: courier\r\nContent-Length: 0\r\n"
        "Connection: close\r\n\r\n");
  h.keep_alive = true;
  h.http10_client = true;
  CHECK(format_head(h).find("Connection: keep-alive\r\n") != std::string::npos);
}

TEST_CASE("wire format: 204 and 304 carry no Content-Length; a bad status becomes 500", "[http]") {
  response_head h;
  h.status = 204;
  h.content_length = 5;
  CHECK(format_head(h).find("Content-Length") == std::string::npos);
  CHECK_FALSE(status_allows_body(204));
  CHECK_FALSE(status_allows_body(304));
  CHECK_FALSE(status_allows_body(101));
  CHECK(status_allows_body(200));
  h.status = 42;
  CHECK(format_head(h).rfind("HTTP/1.1 500 Internal Server Error\r\n", 0) == 0);
  h.status = 299;
  CHECK(format_head(h).rfind("HTTP/1.1 299 Unknown\r\n", 0) == 0);
}

TEST_CASE("wire format: headers that could split the response or fight the server are refused",
          "[http]") {
  CHECK(is_settable_header("X-Request-Id", "abc"));
  CHECK(is_settable_header("Cache-Control", "no-cache"));
  CHECK_FALSE(is_settable_header("X-A", "a\r\nSet-Cookie: x"));
  CHECK_FALSE(is_settable_header("X-A", std::string("a\0b", 3)));
  CHECK_FALSE(is_settable_header("Bad Name", "x"));
  CHECK_FALSE(is_settable_header("", "x"));
  CHECK_FALSE(is_settable_header("X:Y", "x"));
  for (const char* managed : {"Content-Length", "transfer-encoding", "CONNECTION", "Date", "Server",
                              "Content-Type", "Keep-Alive", "Upgrade"}) {
    CHECK_FALSE(is_settable_header(managed, "x"));
  }
  response_head h;
  h.content_type = "text/plain\r\nX-Injected: 1";
  CHECK(format_head(h).find("Injected") == std::string::npos);
}

TEST_CASE("wire format: chunk framing is hex size, CRLF, data, CRLF; the last is 0", "[http]") {
  CHECK(chunk_prefix(1) == "1\r\n");
  CHECK(chunk_prefix(255) == "ff\r\n");
  CHECK(chunk_prefix(4096) == "1000\r\n");
  CHECK(chunk_suffix == "\r\n");
  CHECK(last_chunk == "0\r\n\r\n");
}

TEST_CASE("wire format: error bodies have the OpenAI shape and escape the message", "[http]") {
  CHECK(error_json(413, "too big") ==
        R"({"error":{"message":"too big","type":"invalid_request_error","param":null,"code":null}})");
  CHECK(error_json(400, "a \"b\"\\\n\x01") ==
        R"({"error":{"message":"a \"b\"\\\n\u0001","type":"invalid_request_error","param":null,"code":null}})");
  CHECK(error_json(500, "x") ==
        R"({"error":{"message":"x","type":"server_error","param":null,"code":null}})");
}

TEST_CASE("wire format: a 503 says when to retry unless the handler already did", "[http]") {
  response_head h;
  h.status = 503;
  const std::string head = format_head(h);
  CHECK(head.find("Retry-After: " + std::to_string(default_retry_after_s) + "\r\n") !=
        std::string::npos);
  h.extra_headers = {{"retry-after", "9"}};
  const std::string own = format_head(h);
  CHECK(own.find("retry-after: 9\r\n") != std::string::npos);
  CHECK(own.find("Retry-After") == std::string::npos);
  h.status = 500;
  h.extra_headers.clear();
  CHECK(format_head(h).find("Retry-After") == std::string::npos);
}

}  // namespace courier_test_actors_admission_http_wire_format
