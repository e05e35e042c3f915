// admission_server's routing without a model runtime: health (GET and HEAD), 405 with Allow,
// /v1/models/{id}, API keys, CORS preflights, and /tokenize answered off the I/O thread.
#include <catch2/catch.hpp>

#include <caf/all.hpp>

#include <fstream>
#include <future>
#include <iterator>
#include <string>
#include <utility>
#include <vector>
#include <nlohmann/json.hpp>

#include "actors/admission/admission_context.hpp"
#include "actors/admission/admission_server.hpp"
#include "actors/admission/api_request.hpp"
#include "actors/admission/web_assets.hpp"
#include "tests/actors/admission/http/raw_client.hpp"
#include "tests/actors/admission/http/test_server.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/text_assets.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_admission_server {

using namespace courier;
using http::test::get;
using http::test::post;
using http::test::raw_client;
using http::test::reply;
using nlohmann::json;

namespace {

caf::actor_system_config one_worker() {
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 1);
  return cfg;
}

// An admission server over an actor system of one CAF worker, with tiny-qwen3's tokenizer and
// no scheduler (nothing here generates).
struct light_server {
  caf::actor_system_config cfg = one_worker();
  caf::actor_system sys{cfg};
  std::shared_ptr<admission::admission_context> ctx =
      std::make_shared<admission::admission_context>();
  std::unique_ptr<admission::admission_server> server;

  explicit light_server(config::server_config scfg = {}) {
    scfg.server.port = 0;
    ctx->model_name = "tiny-qwen3";
    ctx->max_model_len = 512;
    ctx->api_keys = scfg.server.api_keys;
    ctx->web_ui = admission::web_ui_on(scfg.server);
    test::use_shared_text_assets(*ctx, test::model_dir("tiny-qwen3"));
    ctx->vocab_size = 151936;
    server = std::make_unique<admission::admission_server>(sys, ctx, scfg);
  }
  ~light_server() { server.reset(); }
  std::uint16_t port() const { return server->port(); }
};

config::server_config with_key() {
  config::server_config c;
  c.server.api_keys = {{"k1", "team-a"}};
  return c;
}

// Occupies the one CAF worker until released.
void block_fn(caf::event_based_actor*, std::shared_ptr<std::promise<void>> started,
              std::shared_future<void> release) {
  started->set_value();
  release.wait();
}

}  // namespace

TEST_CASE("admission: HEAD /health is the GET's head without a body", "[admission][http]") {
  light_server s;
  raw_client c(s.port());
  c.write(get("/health"));
  const reply g = c.read_reply();
  CHECK(g.status == 200);
  CHECK(json::parse(g.body) == json{{"status", "ok"}});
  c.write("HEAD /health HTTP/1.1\r\nHost: t\r\n\r\n");
  const reply h = c.read_head();
  CHECK(h.status == 200);
  CHECK(h.header("content-length") == std::to_string(g.body.size()));
  CHECK(h.header("content-type") == "application/json");
  // No body followed: the next response on the connection is read from its first byte.
  c.write(get("/health"));
  CHECK(c.read_reply().body == g.body);
}

TEST_CASE("admission: a method a known path does not take is 405 with Allow",
          "[admission][http]") {
  light_server s(with_key());
  raw_client c(s.port());
  c.write("DELETE /health HTTP/1.1\r\nHost: t\r\n\r\n");
  reply r = c.read_reply();
  CHECK(r.status == 405);
  CHECK(r.header("allow") == "GET, HEAD, OPTIONS");
  CHECK(json::parse(r.body)["error"]["type"] == "invalid_request_error");
  c.write(get("/v1/completions"));
  r = c.read_reply();
  CHECK(r.status == 405);
  CHECK(r.header("allow") == "POST, OPTIONS");
  c.write(post("/v1/models", "{}"));
  r = c.read_reply();
  CHECK(r.status == 405);
  CHECK(r.header("allow") == "GET, HEAD, OPTIONS");
  c.write(post("/nowhere", "{}", "Authorization: Bearer k1\r\n"));
  r = c.read_reply();
  CHECK(r.status == 404);
  CHECK(json::parse(r.body)["error"]["code"].is_null());
}

TEST_CASE("admission: GET /v1/models/{id} is the served model, another id is model_not_found",
          "[admission][http]") {
  light_server s(with_key());
  raw_client c(s.port());
  const std::string key = "Authorization: Bearer k1\r\n";
  c.write(get("/v1/models/tiny-qwen3", key));
  reply r = c.read_reply();
  REQUIRE(r.status == 200);
  json m = json::parse(r.body);
  CHECK(m["id"] == "tiny-qwen3");
  CHECK(m["object"] == "model");
  CHECK(m["owned_by"] == "courier");
  c.write(get("/v1/models", key));
  CHECK(json::parse(c.read_reply().body)["data"][0] == m);  // the same object as in the list

  c.write(get("/v1/models/gpt-9", key));
  r = c.read_reply();
  CHECK(r.status == 404);
  const json e = json::parse(r.body)["error"];
  CHECK(e["code"] == "model_not_found");
  CHECK(e["type"] == "invalid_request_error");
  CHECK(e["param"] == "model");
  CHECK_THAT(e["message"].get<std::string>(), Catch::Contains("gpt-9"));

  c.write(get("/v1/models/tiny-qwen3"));  // the key is required as for /v1/models
  r = c.read_reply();
  CHECK(r.status == 401);
  CHECK(json::parse(r.body)["error"]["code"] == "invalid_api_key");
}

TEST_CASE("admission: GET and DELETE /v1/responses/{id} read and remove the tenant's kept "
          "response; any other id is OpenAI's 404", "[admission][http]") {
  config::server_config c;
  c.server.api_keys = {{"k1", "team-a"}, {"k2", "team-b"}};
  light_server s(c);
  s.ctx->responses = std::make_shared<admission::response_store>(1 << 20, 60000);
  const nlohmann::ordered_json kept = {
      {"id", "resp_1"}, {"object", "response"}, {"status", "completed"}, {"output", json::array()}};
  REQUIRE(s.ctx->responses->keep("team-a", kept, json::array()));
  raw_client c1(s.port());
  const std::string a = "Authorization: Bearer k1\r\n", b = "Authorization: Bearer k2\r\n";
  const auto del = [](const std::string& path, const std::string& key) {
    return "DELETE " + path + " HTTP/1.1\r\nHost: t\r\n" + key + "\r\n";
  };
  const auto not_found = [](const reply& r, const std::string& id) {
    CHECK(r.status == 404);
    const json e = json::parse(r.body)["error"];
    CHECK(e["message"] == "Response with id '" + id + "' not found.");
    CHECK(e["type"] == "invalid_request_error");
  };
  c1.write(get("/v1/responses/resp_1", a));
  reply r = c1.read_reply();
  REQUIRE(r.status == 200);
  CHECK(r.body == kept.dump());
  c1.write(get("/v1/responses/resp_1", b));  // another tenant: as if never kept
  not_found(c1.read_reply(), "resp_1");
  c1.write(del("/v1/responses/resp_1", b));
  not_found(c1.read_reply(), "resp_1");
  c1.write(get("/v1/responses/resp_1"));
  CHECK(c1.read_reply().status == 401);
  c1.write(post("/v1/responses/resp_1", "{}", a));
  r = c1.read_reply();
  CHECK(r.status == 405);
  CHECK(r.header("allow") == "GET, HEAD, DELETE, OPTIONS");
  c1.write(get("/v1/responses/resp_1/input_items", a));  // not served: no such endpoint
  CHECK(c1.read_reply().status == 404);
  c1.write(del("/v1/responses/resp_1", a));
  r = c1.read_reply();
  CHECK(r.status == 200);
  CHECK(json::parse(r.body) == json{{"id", "resp_1"}, {"object", "response"}, {"deleted", true}});
  CHECK(s.ctx->responses->size() == 0);
  c1.write(get("/v1/responses/resp_1", a));
  not_found(c1.read_reply(), "resp_1");
  c1.write(del("/v1/responses/resp_1", a));
  not_found(c1.read_reply(), "resp_1");
}

TEST_CASE("admission: the Bearer scheme is matched in any case, with whitespace tolerated",
          "[admission][http]") {
  light_server s(with_key());
  raw_client c(s.port());
  for (const char* auth : {"Bearer k1", "bearer k1", "BEARER k1", "  Bearer   k1  "}) {
    INFO(auth);
    c.write(get("/v1/models", std::string("Authorization: ") + auth + "\r\n"));
    CHECK(c.read_reply().status == 200);
  }
  for (const char* auth : {"Basic k1", "Bearer", "Bearer k2", "Bearerk1"}) {
    INFO(auth);
    c.write(get("/v1/models", std::string("Authorization: ") + auth + "\r\n"));
    reply r = c.read_reply();
    CHECK(r.status == 401);
    CHECK(json::parse(r.body)["error"]["code"] == "invalid_api_key");
  }
}

TEST_CASE("admission: a CORS preflight is answered without a key; a 401 still says the origin",
          "[admission][http]") {
  config::server_config cfg = with_key();
  cfg.server.cors_allowed_origins = {"https://app.example"};
  light_server s(cfg);
  raw_client c(s.port());
  c.write(
      "OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: t\r\nOrigin: https://app.example\r\n"
      "Access-Control-Request-Method: POST\r\n"
      "Access-Control-Request-Headers: content-type, authorization, x-stainless-os\r\n\r\n");
  reply r = c.read_reply();
  CHECK(r.status == 204);
  CHECK(r.body.empty());
  CHECK(r.header("access-control-allow-origin") == "https://app.example");
  CHECK(r.header("access-control-allow-methods") == "POST, OPTIONS");
  CHECK(r.header("access-control-allow-headers") ==
        "Authorization, Content-Type, x-stainless-os");
  CHECK(r.header("access-control-max-age") == std::to_string(http::cors_max_age_s));
  CHECK(r.header("vary") == "Origin");
  CHECK(r.header("allow") == "POST, OPTIONS");

  c.write(post("/v1/chat/completions", "{}", "Origin: https://app.example\r\n"));
  r = c.read_reply();
  CHECK(r.status == 401);
  CHECK(r.header("access-control-allow-origin") == "https://app.example");
  CHECK(r.header("vary") == "Origin");

  // Another origin's preflight learns nothing about CORS.
  c.write(
      "OPTIONS /v1/models HTTP/1.1\r\nHost: t\r\nOrigin: https://evil.example\r\n"
      "Access-Control-Request-Method: GET\r\n\r\n");
  r = c.read_reply();
  CHECK(r.status == 204);
  CHECK_FALSE(r.has_header("access-control-allow-origin"));
  CHECK_FALSE(r.has_header("access-control-allow-methods"));
}

TEST_CASE("admission: /tokenize runs after the handler returns, so /health is answered first",
          "[admission][http]") {
  light_server s;
  // The one CAF worker is held: whatever the server hands to an actor waits, and whatever it
  // answers on its I/O thread does not.
  auto started = std::make_shared<std::promise<void>>();
  std::promise<void> release;
  auto started_f = started->get_future();
  s.sys.spawn(block_fn, started, release.get_future().share());
  REQUIRE(started_f.wait_for(std::chrono::seconds(5)) == std::future_status::ready);

  const std::string prompt = "The quick brown fox jumps over the lazy dog. ";
  std::string big;
  for (int i = 0; i < 20000; ++i) big += prompt;  // ~900 KB
  raw_client tok(s.port());
  tok.write(post("/tokenize", json{{"prompt", big}}.dump()));
  // The handler has run and returned with the request still owed.
  CHECK(http::test::eventually([&] { return s.server->num_in_flight() == 1; }));

  raw_client health(s.port());
  health.write(get("/health"));
  CHECK(health.read_reply().status == 200);
  CHECK_FALSE(tok.has_bytes_now());  // not tokenized yet: that waits for a CAF worker

  release.set_value();
  const reply r = tok.read_reply();
  REQUIRE(r.status == 200);
  const json j = json::parse(r.body);
  const auto expected = s.ctx->tok->encode(big, true);
  CHECK(j["count"] == expected.size());
  CHECK(j["tokens"].get<std::vector<text::token_id>>() == expected);
}

TEST_CASE("admission: /detokenize and bad /tokenize bodies are answered by the actor",
          "[admission][http]") {
  light_server s;
  raw_client c(s.port());
  const auto ids = s.ctx->tok->encode("hello world", false);
  c.write(post("/detokenize", json{{"tokens", ids}}.dump()));
  reply r = c.read_reply();
  REQUIRE(r.status == 200);
  CHECK(json::parse(r.body)["prompt"] == "hello world");
  c.write(post("/tokenize", "{not json"));
  r = c.read_reply();
  CHECK(r.status == 400);
  CHECK_THAT(json::parse(r.body)["error"]["message"].get<std::string>(),
             Catch::Contains("JSON"));
  c.write(post("/detokenize", R"({"tokens": [-1]})"));
  r = c.read_reply();
  CHECK(r.status == 400);
  CHECK(json::parse(r.body)["error"]["param"] == "tokens");
}

// vLLM's /tokenize: with messages, the prompt the chat request would render, so that a client
// budgeting its context counts the tool block too; a model named must be one served.
TEST_CASE("admission: /tokenize with messages renders tools and chat_template_kwargs as chat "
          "does; a model it does not serve is a 404",
          "[admission][http]") {
  light_server s;
  raw_client c(s.port());
  const json messages = {{{"role", "user"}, {"content", "Weather in Paris?"}}};
  const json city = {{"type", "object"}, {"properties", {{"city", {{"type", "string"}}}}}};
  const json tools = {{{"type", "function"},
                       {"function",
                        {{"name", "get_weather"},
                         {"description", "Current weather"},
                         {"parameters", city}}}}};
  const auto tokens_of = [&](const json& body) {
    c.write(post("/tokenize", body.dump()));
    const reply r = c.read_reply();
    REQUIRE(r.status == 200);
    return json::parse(r.body)["tokens"].get<std::vector<text::token_id>>();
  };
  const auto plain = tokens_of({{"model", "tiny-qwen3"}, {"messages", messages}});
  const auto with_tools =
      tokens_of({{"model", "tiny-qwen3"}, {"messages", messages}, {"tools", tools}});
  const std::string rendered = s.ctx->tok->decode(with_tools);
  CHECK_THAT(rendered, Catch::Contains("<tools>") && Catch::Contains("\"name\": \"get_weather\""));
  CHECK(with_tools.size() > plain.size() + 20);
  // The same ids as the chat request with those fields is tokenized to.
  const json chat = {{"model", "tiny-qwen3"},
                     {"messages", messages},
                     {"tools", tools},
                     {"chat_template_kwargs", {{"enable_thinking", false}}}};
  const auto chat_ids =
      admission::parse_api_request(admission::endpoint::chat, chat.dump(), *s.ctx).prompts.at(0);
  const auto no_thinking = tokens_of({{"messages", messages},  // no model: the served one
                                      {"tools", tools},
                                      {"chat_template_kwargs", {{"enable_thinking", false}}}});
  CHECK(no_thinking == chat_ids);
  CHECK(no_thinking != with_tools);  // Qwen3's template closes an empty think block
  for (const char* route : {"/tokenize", "/detokenize"}) {
    INFO(route);
    c.write(post(route, json{{"model", "gpt-9"}, {"prompt", "hi"}, {"tokens", {1}}}.dump()));
    const reply r = c.read_reply();
    CHECK(r.status == 404);
    const json e = json::parse(r.body)["error"];
    CHECK(e["code"] == "model_not_found");
    CHECK(e["type"] == "invalid_request_error");
  }
}

TEST_CASE("admission: the web page is served at / and /ui/, byte for byte, without a key, with "
          "headers that keep it to this server",
          "[admission][http]") {
  light_server s(with_key());
  raw_client c(s.port());
  c.write(get("/"));
  const reply index = c.read_reply();
  REQUIRE(index.status == 200);
  CHECK(index.header("content-type") == "text/html; charset=utf-8");
  CHECK_THAT(index.body, Catch::Contains("<script src=\"/ui/app.js\" defer></script>"));
  const std::string csp = index.header("content-security-policy");
  CHECK_THAT(csp, Catch::Contains("default-src 'none'") && Catch::Contains("script-src 'self'") &&
                      Catch::Contains("connect-src 'self'") &&
                      Catch::Contains("frame-ancestors 'none'"));
  CHECK(index.header("x-content-type-options") == "nosniff");
  CHECK(index.header("x-frame-options") == "DENY");
  // Each file is the source tree's, byte for byte, with its type.
  const std::string web = COURIER_TEST_DATA "/../../actors/admission/web/";
  for (const auto& [file, type] : std::vector<std::pair<std::string, std::string>>{
           {"index.html", "text/html; charset=utf-8"},
           {"app.js", "text/javascript; charset=utf-8"},
           {"style.css", "text/css; charset=utf-8"}}) {
    INFO(file);
    c.write(get("/ui/" + file));
    const reply r = c.read_reply();
    CHECK(r.status == 200);
    CHECK(r.header("content-type") == type);
    std::ifstream in(web + file, std::ios::binary);
    const std::string want((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE_FALSE(want.empty());
    CHECK(r.body == want);
  }
  CHECK(admission::num_web_assets() == 4);  // the three files, and index.html at "/"
  c.write(get("/ui/missing.js"));
  CHECK(c.read_reply().status == 404);
  c.write("HEAD / HTTP/1.1\r\nHost: t\r\n\r\n");
  const reply head = c.read_head();
  CHECK(head.status == 200);
  CHECK(head.header("content-length") == std::to_string(index.body.size()));
  // The page holds no data: what it shows comes from the API, which still needs the key.
  c.write(get("/v1/models"));
  CHECK(c.read_reply().status == 401);
}

TEST_CASE("admission: server.web_ui off answers 404 naming the key; auto serves the page on a "
          "loopback host only",
          "[admission][http]") {
  config::server_config off;
  off.server.web_ui = "false";
  light_server s(off);
  raw_client c(s.port());
  c.write(get("/"));
  const reply r = c.read_reply();
  CHECK(r.status == 404);
  CHECK_THAT(r.body, Catch::Contains("server.web_ui"));
  config::server_section h;
  for (const char* host : {"127.0.0.1", "127.0.1.1", "::1", "localhost"}) {
    h.host = host;
    CHECK(admission::web_ui_on(h));
  }
  for (const char* host : {"0.0.0.0", "10.1.2.3", "::", "example.com"}) {
    h.host = host;
    CHECK_FALSE(admission::web_ui_on(h));
  }
  h.web_ui = "true";  // as set, whatever the host
  CHECK(admission::web_ui_on(h));
  h.host = "127.0.0.1";
  h.web_ui = "false";
  CHECK_FALSE(admission::web_ui_on(h));
}

}  // namespace courier_test_actors_admission_admission_server
