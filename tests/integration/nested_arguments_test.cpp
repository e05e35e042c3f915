// JSON nested inside a JSON string, on the routes that parse a conversation's tool-call
// arguments besides chat completions (api_request_test covers chat): /tokenize with messages,
// and /v1/responses function_call items. The issue's report: 90,000 levels inside the string
// crashed the server (SIGSEGV). Each is a 400 naming server.max_json_depth, and the server
// goes on serving.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/http_fixture.hpp"
#include "tests/support/runtime_harness.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_nested_arguments {

using namespace courier;
using nlohmann::json;

TEST_CASE("nested arguments: /tokenize and /v1/responses refuse tool-call arguments nested "
          "90k levels inside their string with a 400",
          "[integration][http]") {
  auto cfg = test::sim_config("tiny-qwen3");
  cfg.server.max_body_bytes = 1 << 20;
  test::server_fixture s(cfg);
  const std::string deep = "{\"a\": " + std::string(90000, '[') + std::string(90000, ']') + "}";
  const json tool_call = {{"id", "call_1"},
                          {"type", "function"},
                          {"function", {{"name", "f"}, {"arguments", deep}}}};
  const json tokenize = {
      {"model", "tiny-qwen3"},
      {"messages", {{{"role", "user"}, {"content", "hi"}},
                    {{"role", "assistant"}, {"content", ""}, {"tool_calls", {tool_call}}},
                    {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "ok"}}}}};
  const auto t = test::curl(s.url("/tokenize"), tokenize.dump());
  CHECK(t.status == 400);
  CHECK_THAT(t.body, Catch::Contains("server.max_json_depth") &&
                         Catch::Contains("tool_calls[0].function.arguments"));

  const json responses = {
      {"model", "tiny-qwen3"},
      {"max_output_tokens", 4},
      {"input", {{{"role", "user"}, {"content", "hi"}},
                 {{"type", "function_call"}, {"call_id", "call_1"}, {"name", "f"},
                  {"arguments", deep}},
                 {{"type", "function_call_output"}, {"call_id", "call_1"}, {"output", "ok"}}}}};
  const auto r = test::curl(s.url("/v1/responses"), responses.dump());
  CHECK(r.status == 400);
  CHECK_THAT(r.body, Catch::Contains("server.max_json_depth"));

  // Shallow arguments on both routes are served; the server is up.
  json shallow = tokenize;
  shallow["messages"][1]["tool_calls"][0]["function"]["arguments"] = R"({"a": [[1]]})";
  CHECK(test::curl(s.url("/tokenize"), shallow.dump()).status == 200);
  json shallow_r = responses;
  shallow_r["input"][1]["arguments"] = R"({"a": [[1]]})";
  CHECK(test::curl(s.url("/v1/responses"), shallow_r.dump()).status == 200);
}

}  // namespace courier_test_integration_nested_arguments
