// CORS: which origins a policy allows and what it answers, and the transport adding
// Access-Control-Allow-Origin and Vary to every response to an allowed origin: whole bodies,
// stream heads, the handler's failures and the transport's own errors.
#include <catch2/catch.hpp>

#include "actors/admission/http/cors.hpp"
#include "tests/actors/admission/http/raw_client.hpp"
#include "tests/actors/admission/http/test_server.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_http_cors {

using namespace courier::http;
using namespace courier::http::test;

namespace {

std::string value_of(const header_list& headers, const std::string& name) {
  for (const auto& [n, v] : headers) {
    if (n == name) return v;
  }
  return "(absent)";
}

request preflight(const std::string& origin, const std::string& asked_headers) {
  request r;
  r.method = "OPTIONS";
  r.target = "/v1/chat/completions";
  r.headers["origin"] = origin;
  r.headers["access-control-request-method"] = "POST";
  if (!asked_headers.empty()) r.headers["access-control-request-headers"] = asked_headers;
  return r;
}

server_options cors_options(std::vector<std::string> origins) {
  server_options opts;
  opts.cors_allowed_origins = std::move(origins);
  return opts;
}

}  // namespace

TEST_CASE("cors policy: a listed origin is echoed, another is not, and '*' allows any", "[http]") {
  const cors_policy listed({"https://app.example", "http://localhost:3000"});
  CHECK(listed.enabled());
  CHECK(listed.allow_origin("https://app.example") == "https://app.example");
  CHECK(listed.allow_origin("http://localhost:3000") == "http://localhost:3000");
  CHECK(listed.allow_origin("https://evil.example").empty());
  CHECK(listed.allow_origin("https://app.example.evil").empty());
  CHECK(listed.allow_origin("").empty());
  const header_list h = listed.response_headers("https://app.example");
  CHECK(value_of(h, "Access-Control-Allow-Origin") == "https://app.example");
  CHECK(value_of(h, "Vary") == "Origin");
  // A page may read the request's id and Retry-After (not CORS-safelisted headers).
  CHECK(value_of(h, "Access-Control-Expose-Headers") == "x-request-id, request-id, retry-after");
  CHECK(value_of(listed.response_headers("https://evil.example"),
                 "Access-Control-Allow-Origin") == "(absent)");
  CHECK(value_of(listed.response_headers("https://evil.example"),
                 "Access-Control-Expose-Headers") == "(absent)");

  const cors_policy any({"*"});
  CHECK(any.allow_origin("https://anything.example") == "*");
  CHECK(value_of(any.response_headers("https://x.example"), "Access-Control-Allow-Origin") == "*");

  const cors_policy off;
  CHECK_FALSE(off.enabled());
  CHECK(off.allow_origin("https://app.example").empty());
  CHECK(off.response_headers("https://app.example").empty());
}

TEST_CASE("cors policy: a preflight is told the methods, the headers it asked for and a max age",
          "[http]") {
  const cors_policy p({"https://app.example"});
  request r = preflight("https://app.example", "X-Custom, content-type,  x-trace-id ,bad header");
  CHECK(is_preflight(r));
  const header_list h = p.preflight_headers(r, "POST, OPTIONS");
  CHECK(value_of(h, "Access-Control-Allow-Methods") == "POST, OPTIONS");
  // Authorization and Content-Type always; asked names once each; never a non-name.
  CHECK(value_of(h, "Access-Control-Allow-Headers") ==
        "Authorization, Content-Type, X-Custom, x-trace-id");
  CHECK(value_of(h, "Access-Control-Max-Age") == std::to_string(cors_max_age_s));

  CHECK(p.preflight_headers(preflight("https://evil.example", ""), "POST").empty());
  request plain;
  plain.method = "OPTIONS";
  CHECK_FALSE(is_preflight(plain));
}

TEST_CASE("http server: every response to an allowed origin carries Allow-Origin and Vary",
          "[http]") {
  server_options opts = cors_options({"https://app.example"});
  opts.max_body_bytes = 100;
  test_server ts(opts);
  const std::string origin = "Origin: https://app.example\r\n";
  raw_client c(ts.port());

  c.write(get("/echo", origin));
  reply r = c.read_reply();
  CHECK(r.header("access-control-allow-origin") == "https://app.example");
  CHECK(r.header("access-control-expose-headers") == "x-request-id, request-id, retry-after");
  CHECK(!r.header("x-request-id").empty());
  CHECK(r.header("vary") == "Origin");

  c.write(get("/echo", "Origin: https://evil.example\r\n"));
  r = c.read_reply();
  CHECK_FALSE(r.has_header("access-control-allow-origin"));
  CHECK(r.header("vary") == "Origin");

  c.write(get("/echo"));
  CHECK_FALSE(c.read_reply().has_header("access-control-allow-origin"));

  SECTION("a stream head, with the handler's own headers") {
    c.write(get("/held/stream", origin));
    held_request h = ts.next_held();
    h.writer->start_stream(200, "text/event-stream", {{"X-Custom", "r-1"}});
    h.writer->write_chunk("data: 1\n\n");
    h.writer->end_stream();
    r = c.read_reply();
    CHECK(r.header("access-control-allow-origin") == "https://app.example");
    CHECK(r.header("vary") == "Origin");
    CHECK(r.header("x-custom") == "r-1");
    CHECK(r.body == "data: 1\n\n");
  }
  SECTION("the 500 of a handler that throws") {
    c.write(get("/throw", origin));
    r = c.read_reply();
    CHECK(r.status == 500);
    CHECK(r.header("access-control-allow-origin") == "https://app.example");
  }
  SECTION("the transport's own 413") {
    c.write(post("/echo", std::string(200, 'x'), origin));
    r = c.read_reply();
    CHECK(r.status == 413);
    CHECK(r.header("access-control-allow-origin") == "https://app.example");
  }
}

TEST_CASE("http server: with '*' any origin may read, and without CORS nothing is added",
          "[http]") {
  {
    test_server ts(cors_options({"*"}));
    raw_client c(ts.port());
    c.write(get("/echo", "Origin: https://anything.example\r\n"));
    CHECK(c.read_reply().header("access-control-allow-origin") == "*");
  }
  test_server ts;
  raw_client c(ts.port());
  c.write(get("/echo", "Origin: https://app.example\r\n"));
  reply r = c.read_reply();
  CHECK_FALSE(r.has_header("access-control-allow-origin"));
  CHECK_FALSE(r.has_header("vary"));
}

}  // namespace courier_test_actors_admission_http_cors
