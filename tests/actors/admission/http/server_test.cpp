// Requests and whole responses through a real socket: round trips, keep-alive, pipelining, the
// limits, malformed input and the transport's own error answers.
#include <catch2/catch.hpp>

#include <cctype>
#include <string>

#include "tests/actors/admission/http/raw_client.hpp"
#include "tests/actors/admission/http/test_server.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_http_server {

using namespace courier::http;
using namespace courier::http::test;

TEST_CASE("http server: a GET is answered with the handler's body, Content-Length and Server",
          "[http]") {
  test_server ts;
  raw_client c(ts.port());
  c.write(get("/echo/a?x=1&y=2", "X-Test: Hello\r\n"));
  reply r = c.read_reply();
  CHECK(r.status == 200);
  CHECK(r.body == "GET /echo/a x=1&y=2 Hello\n");
  CHECK(r.header("content-length") == std::to_string(r.body.size()));
  CHECK(r.header("content-type") == "text/plain");
  CHECK(r.header("server") == "courier");
  CHECK(r.has_header("date"));
  CHECK_FALSE(r.has_header("connection"));  // HTTP/1.1 keeps the connection by default
  CHECK(ts.handler_thread() != std::this_thread::get_id());
}

TEST_CASE("http server: a POST body reaches the handler whole, with Content-Length or chunked",
          "[http]") {
  test_server ts;
  raw_client c(ts.port());
  std::string body = "{\"prompt\":\"hi\"}";
  body += std::string("\0\x01\xff", 3);  // bodies are bytes, not C strings
  c.write(post("/echo", body));
  reply r = c.read_reply();
  CHECK(r.status == 200);
  CHECK(r.body == "POST /echo  -\n" + body);

  c.write(
      "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
  CHECK(c.read_reply().body == "POST /echo  -\nhello world");
}

TEST_CASE("http server: header names arrive lower-case and repeated headers are joined", "[http]") {
  test_server ts;
  raw_client c(ts.port());
  c.write(get("/held", "X-Multi: a\r\nx-multi: b\r\nAuthorization: Bearer k\r\n"));
  held_request h = ts.next_held();
  CHECK(h.req.method == "GET");
  CHECK(h.req.target == "/held");
  CHECK(h.req.query.empty());
  CHECK(h.req.headers.at("x-multi") == "a, b");
  CHECK(h.req.headers.at("authorization") == "Bearer k");
  CHECK(h.req.headers.at("host") == "test");
  h.writer->send(200, "text/plain", "ok");
  CHECK(c.read_reply().body == "ok");
}

TEST_CASE("http server: two requests on one keep-alive connection are both answered", "[http]") {
  test_server ts;
  raw_client c(ts.port());
  c.write(get("/echo/1"));
  CHECK(c.read_reply().body == "GET /echo/1  -\n");
  c.write(post("/echo/2", "second"));
  CHECK(c.read_reply().body == "POST /echo/2  -\nsecond");
  CHECK(ts.num_handled == 2);
}

TEST_CASE("http server: pipelined requests are answered in order, one at a time", "[http]") {
  test_server ts;
  raw_client c(ts.port());
  c.write(get("/held/1") + get("/echo/2") + post("/echo/3", "x"));
  held_request h = ts.next_held();
  CHECK(h.req.target == "/held/1");
  // The next requests wait in the buffer until the first response is complete.
  CHECK(ts.num_handled == 1);
  h.writer->send(200, "text/plain", "first");
  CHECK(c.read_reply().body == "first");
  CHECK(c.read_reply().body == "GET /echo/2  -\n");
  CHECK(c.read_reply().body == "POST /echo/3  -\nx");
}

TEST_CASE("http server: Connection: close is answered and then the connection is closed",
          "[http]") {
  test_server ts;
  raw_client c(ts.port());
  c.write(get("/echo", "Connection: close\r\n"));
  reply r = c.read_reply();
  CHECK(r.status == 200);
  CHECK(r.header("connection") == "close");
  CHECK(c.closed_by_server());
}

TEST_CASE("http server: an HTTP/1.0 client is answered and closed unless it asks keep-alive",
          "[http]") {
  test_server ts;
  {
    raw_client c(ts.port());
    c.write("GET /echo HTTP/1.0\r\n\r\n");
    reply r = c.read_reply();
    CHECK(r.status == 200);
    CHECK(r.header("connection") == "close");
    CHECK(c.closed_by_server());
  }
  raw_client c(ts.port());
  c.write("GET /echo/1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  reply r = c.read_reply();
  CHECK(r.header("connection") == "keep-alive");
  c.write("GET /echo/2 HTTP/1.0\r\n\r\n");
  CHECK(c.read_reply().body == "GET /echo/2  -\n");
}

TEST_CASE("http server: a body over max_body_bytes gets 413 without calling the handler",
          "[http]") {
  server_options opts;
  opts.max_body_bytes = 1000;
  test_server ts(opts);
  const std::string expected =
      "{\"error\":{\"message\":\"request body is larger than 1000 bytes\","
      "\"type\":\"invalid_request_error\",\"param\":null,\"code\":null}}";
  SECTION("announced by Content-Length") {
    raw_client c(ts.port());
    c.write(post("/echo", std::string(5000, 'x')));
    reply r = c.read_reply();
    CHECK(r.status == 413);
    CHECK(r.header("content-type") == "application/json");
    CHECK(r.header("connection") == "close");
    CHECK(r.body == expected);
    CHECK(c.closed_by_server());
    CHECK(ts.num_handled == 0);
  }
  SECTION("found while reading a chunked body") {
    raw_client c(ts.port());
    c.write("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n");
    for (int i = 0; i < 3; ++i) c.write("190\r\n" + std::string(400, 'y') + "\r\n");
    reply r = c.read_reply();
    CHECK(r.status == 413);
    CHECK(r.body == expected);
    CHECK(ts.num_handled == 0);
  }
  SECTION("announced with Expect: 100-continue, which then gets no 100") {
    raw_client c(ts.port());
    c.write(
        "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\n"
        "Expect: 100-continue\r\n\r\n");
    reply r = c.read_reply();
    CHECK(r.status == 413);
    CHECK(r.body == expected);
    CHECK(c.closed_by_server());
  }
  SECTION("exactly the limit is accepted") {
    raw_client c(ts.port());
    c.write(post("/echo", std::string(1000, 'x')));
    CHECK(c.read_reply().status == 200);
  }
}

TEST_CASE("http server: a header over max_header_bytes gets 431 and close", "[http]") {
  server_options opts;
  opts.max_header_bytes = 2048;
  test_server ts(opts);
  raw_client c(ts.port());
  c.write(get("/echo", "X-Big: " + std::string(4000, 'h') + "\r\n"));
  reply r = c.read_reply();
  CHECK(r.status == 431);
  CHECK(r.body.find("\"type\":\"invalid_request_error\",\"param\":null,\"code\":null") !=
        std::string::npos);
  CHECK(c.closed_by_server());
  CHECK(ts.num_handled == 0);
}

TEST_CASE("http server: garbage gets 400 and close, and the handler never sees it", "[http]") {
  test_server ts;
  for (std::string garbage : {"this is not http\r\n\r\n", "GET / HTTP/9.9\r\n\r\n",
                              "POST /echo HTTP/1.1\r\nContent-Length: nope\r\n\r\n"}) {
    raw_client c(ts.port());
    c.write(garbage);
    reply r = c.read_reply();
    CHECK(r.status == 400);
    CHECK(r.header("connection") == "close");
    CHECK(r.body.find("\"type\":\"invalid_request_error\",\"param\":null,\"code\":null") !=
          std::string::npos);
    CHECK(c.closed_by_server());
  }
  CHECK(ts.num_handled == 0);
}

TEST_CASE("http server: Expect: 100-continue gets an interim 100 before the body is sent",
          "[http]") {
  test_server ts;
  raw_client c(ts.port());
  c.write("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
  CHECK(c.read_head().status == 100);
  c.write("body");
  reply r = c.read_reply();
  CHECK(r.status == 200);
  CHECK(r.body == "POST /echo  -\nbody");
}

TEST_CASE("http server: a handler that throws gets the client a 500", "[http]") {
  test_server ts;
  raw_client c(ts.port());
  c.write(get("/throw"));
  reply r = c.read_reply();
  CHECK(r.status == 500);
  CHECK(r.body.find("\"type\":\"server_error\"") != std::string::npos);
  c.write(get("/echo"));  // the connection and the server carry on
  CHECK(c.read_reply().status == 200);
  CHECK(eventually([&] { return ts.srv.num_in_flight() == 0; }));
}

TEST_CASE("http server: extra headers are sent, except unsafe or server-managed ones", "[http]") {
  test_server ts;
  raw_client c(ts.port());
  c.write(get("/held"));
  held_request h = ts.next_held();
  h.writer->send(201, "application/json", "{}",
                 {{"X-Custom", "abc"},
                  {"X-Evil", "a\r\nInjected: 1"},
                  {"Bad Name", "x"},
                  {"Content-Length", "99"},
                  {"Connection", "close"}});
  reply r = c.read_reply();
  CHECK(r.status == 201);
  CHECK(r.header("x-custom") == "abc");
  CHECK_FALSE(r.has_header("x-evil"));
  CHECK_FALSE(r.has_header("injected"));
  CHECK_FALSE(r.has_header("connection"));
  CHECK(r.header("content-length") == "2");
  CHECK(r.body == "{}");
}

TEST_CASE("http server: a 204 has neither body nor Content-Length", "[http]") {
  test_server ts;
  raw_client c(ts.port());
  c.write(get("/held"));
  ts.next_held().writer->send(204, "", "ignored");
  reply r = c.read_reply();
  CHECK(r.status == 204);
  CHECK_FALSE(r.has_header("content-length"));
  c.write(get("/echo"));  // nothing stray was left on the connection
  CHECK(c.read_reply().body == "GET /echo  -\n");
}

TEST_CASE("http server: a HEAD is answered with the head a GET would get and no body", "[http]") {
  test_server ts;
  raw_client c(ts.port());
  c.write("HEAD /echo HTTP/1.1\r\nHost: t\r\n\r\n");
  reply r = c.read_head();
  CHECK(r.status == 200);
  CHECK(r.header("content-length") == std::to_string(std::string("HEAD /echo  -\n").size()));
  c.write(get("/echo"));  // the next bytes on the connection are the next response
  CHECK(c.read_reply().body == "GET /echo  -\n");
}

TEST_CASE("http server: a second answer to the same request is ignored", "[http]") {
  test_server ts;
  raw_client c(ts.port());
  c.write(get("/held"));
  held_request h = ts.next_held();
  h.writer->send(200, "text/plain", "one");
  h.writer->send(200, "text/plain", "two");
  h.writer->start_stream(200, "text/plain");
  h.writer->write_chunk("three");
  h.writer->end_stream();
  CHECK(c.read_reply().body == "one");
  c.write(get("/echo"));
  CHECK(c.read_reply().body == "GET /echo  -\n");
}

TEST_CASE("http server: a client that sends half a request is closed after read_timeout_s",
          "[http]") {
  server_options opts;
  opts.read_timeout_s = 1;
  test_server ts(opts);
  raw_client c(ts.port(), std::chrono::seconds(4));
  auto start = std::chrono::steady_clock::now();
  c.write("GET /echo HTTP/1.1\r\nHost:");
  CHECK(c.closed_by_server());
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(900));
  CHECK(ts.num_handled == 0);
}

TEST_CASE("http server: a 503 carries Retry-After, the handler's own if it set one", "[http]") {
  test_server ts;
  raw_client c(ts.port());
  c.write(get("/held/1"));
  ts.next_held().writer->send(503, "application/json", "{}");
  CHECK(c.read_reply().header("retry-after") == "1");
  c.write(get("/held/2"));
  ts.next_held().writer->send(503, "application/json", "{}", {{"Retry-After", "30"}});
  reply r = c.read_reply();
  CHECK(r.header("retry-after") == "30");
  c.write(get("/held/3"));
  ts.next_held().writer->start_stream(503, "text/event-stream");
  CHECK(c.read_head().header("retry-after") == "1");
}

// What a made id looks like: "req_" and 24 lower-case hex digits (request_id.hpp).
bool made_id(const std::string& id) {
  if (id.size() != 28 || id.rfind("req_", 0) != 0) return false;
  for (std::size_t i = 4; i < id.size(); ++i) {
    const auto ch = static_cast<unsigned char>(id[i]);
    if (!std::isxdigit(ch) || std::isupper(ch)) return false;
  }
  return true;
}

TEST_CASE("http server: every response carries the request's id as x-request-id and request-id: "
          "the client's X-Request-Id when valid, else a new one",
          "[http]") {
  server_options opts;
  opts.max_body_bytes = 1000;
  test_server ts(opts);
  raw_client c(ts.port());
  SECTION("a client's id reaches the handler and comes back") {
    c.write(get("/held", "X-Request-Id: run-7/step.3_a:b\r\n"));
    held_request h = ts.next_held();
    CHECK(h.req.id == "run-7/step.3_a:b");
    CHECK(h.writer->request_id() == h.req.id);
    h.writer->send(200, "text/plain", "ok");
    reply r = c.read_reply();
    CHECK(r.header("x-request-id") == "run-7/step.3_a:b");
    CHECK(r.header("request-id") == "run-7/step.3_a:b");
  }
  SECTION("without one, each request gets an id of its own, on whole and streamed answers") {
    c.write(get("/held"));
    held_request a = ts.next_held();
    a.writer->send(200, "text/plain", "a");
    reply ra = c.read_reply();
    c.write(get("/held"));
    held_request b = ts.next_held();
    b.writer->start_stream(200, "text/event-stream");
    b.writer->write_chunk("data: 1\n\n");
    b.writer->end_stream();
    reply rb = c.read_reply();
    CHECK(made_id(a.req.id));
    CHECK(made_id(b.req.id));
    CHECK(a.req.id != b.req.id);
    CHECK(ra.header("x-request-id") == a.req.id);
    CHECK(ra.header("request-id") == a.req.id);
    CHECK(rb.header("x-request-id") == b.req.id);
    CHECK(rb.body == "data: 1\n\n");
  }
  SECTION("an id that is too long, empty, or holds a space or a byte past ASCII is replaced") {
    for (const std::string& bad :
         {std::string(129, 'a'), std::string(), std::string("a b"), std::string("a\xe9")}) {
      c.write(get("/held", "X-Request-Id: " + bad + "\r\n"));
      held_request h = ts.next_held();
      CHECK(made_id(h.req.id));
      h.writer->send(200, "text/plain", "ok");
      CHECK(c.read_reply().header("x-request-id") == h.req.id);
    }
    c.write(get("/held", "X-Request-Id: " + std::string(128, 'a') + "\r\n"));  // the longest
    held_request h = ts.next_held();
    CHECK(h.req.id == std::string(128, 'a'));
    h.writer->send(200, "text/plain", "ok");
    c.read_reply();
  }
  SECTION("the transport's own answers and a throwing handler's 500 carry it too") {
    c.write(get("/throw", "X-Request-Id: t-1\r\n"));
    CHECK(c.read_reply().header("x-request-id") == "t-1");
    c.write(post("/echo", std::string(5000, 'x'), "X-Request-Id: big-1\r\n"));
    reply r = c.read_reply();
    CHECK(r.status == 413);
    CHECK(r.header("x-request-id") == "big-1");
    CHECK(r.header("request-id") == "big-1");
  }
}

}  // namespace courier_test_actors_admission_http_server
