// OpenAI's legacy function calling (actors/admission/openai_functions) against its documented
// shapes: `functions` and `function_call` in the request, `message.function_call` and
// finish_reason "function_call" in the response, `delta.function_call` in a stream, and the
// legacy history (an assistant's function_call, a `function` role message).
#include "actors/admission/openai_functions.hpp"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "actors/admission/api_error.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_openai_functions {

using namespace courier::admission;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

const ordered_json weather = {{"name", "get_weather"},
                              {"description", "The weather in a city"},
                              {"parameters",
                               {{"type", "object"},
                                {"properties", {{"city", {{"type", "string"}}}}},
                                {"required", ordered_json::array({"city"})}}}};

ordered_json legacy_body() {
  return {{"model", "m"},
          {"messages", ordered_json::array({{{"role", "user"}, {"content", "Weather?"}}})},
          {"functions", ordered_json::array({weather})},
          {"function_call", "auto"}};
}

std::string param_of(const ordered_json& body) {
  try {
    legacy_functions_to_tools(body);
  } catch (const api_error& e) {
    CHECK(e.status == 400);
    return e.param;
  }
  return "";
}

}  // namespace

TEST_CASE("legacy functions: the request is its tools form, one call at most", "[admission]") {
  ordered_json b = legacy_body();
  CHECK(uses_legacy_functions(b));
  const ordered_json t = legacy_functions_to_tools(b);
  CHECK_FALSE(t.contains("functions"));
  CHECK_FALSE(t.contains("function_call"));
  REQUIRE(t["tools"].size() == 1);
  CHECK(t["tools"][0]["type"] == "function");
  CHECK(t["tools"][0]["function"] == weather);
  CHECK(t["tool_choice"] == "auto");
  CHECK(t["parallel_tool_calls"] == false);
  b["function_call"] = "none";
  CHECK(legacy_functions_to_tools(b)["tool_choice"] == "none");
  b["function_call"] = {{"name", "get_weather"}};
  CHECK(legacy_functions_to_tools(b)["tool_choice"] ==
        ordered_json{{"type", "function"}, {"function", {{"name", "get_weather"}}}});
  b.erase("function_call");  // OpenAI's default with functions: auto (chat's with tools too)
  CHECK_FALSE(legacy_functions_to_tools(b).contains("tool_choice"));
  CHECK_FALSE(
      uses_legacy_functions(ordered_json{{"model", "m"}, {"tools", ordered_json::array()}}));
  // Explicit nulls, as agent SDKs send unset fields, are not the legacy form.
  CHECK_FALSE(uses_legacy_functions(
      ordered_json{{"model", "m"}, {"functions", nullptr}, {"function_call", nullptr}}));
  b = legacy_body();
  b["tools"] = nullptr;
  b["tool_choice"] = nullptr;
  CHECK(legacy_functions_to_tools(b)["tools"].size() == 1);
}

TEST_CASE("legacy functions: the history's calls and results are tool calls and tool messages",
          "[admission]") {
  ordered_json b = legacy_body();
  b["messages"].push_back(
      {{"role", "assistant"},
       {"content", nullptr},
       {"function_call", {{"name", "get_weather"}, {"arguments", "{\"city\":\"Paris\"}"}}}});
  b["messages"].push_back({{"role", "function"}, {"name", "get_weather"}, {"content", "18 C"}});
  const ordered_json m = legacy_functions_to_tools(b)["messages"];
  REQUIRE(m.size() == 3);
  CHECK_FALSE(m[1].contains("function_call"));
  REQUIRE(m[1]["tool_calls"].size() == 1);
  const ordered_json& call = m[1]["tool_calls"][0];
  CHECK(call["type"] == "function");
  CHECK(call["function"]["name"] == "get_weather");
  CHECK(call["function"]["arguments"] == "{\"city\":\"Paris\"}");
  CHECK(m[2]["role"] == "tool");
  CHECK(m[2]["tool_call_id"] == call["id"]);
  CHECK(m[2]["content"] == "18 C");
}

TEST_CASE("legacy functions: a bad legacy body is a 400 naming the field", "[admission]") {
  ordered_json b = legacy_body();
  b["tools"] = ordered_json::array();
  CHECK(param_of(b) == "functions");
  b = legacy_body();
  b["functions"] = "get_weather";
  CHECK(param_of(b) == "functions");
  b["functions"] = ordered_json::array({{{"description", "no name"}}});
  CHECK(param_of(b) == "functions[0].name");
  b = legacy_body();
  b["function_call"] = 3;
  CHECK(param_of(b) == "function_call");
  b["function_call"] = ordered_json::object();
  CHECK(param_of(b) == "function_call.name");
  b = legacy_body();
  b["messages"].push_back({{"role", "function"}, {"name", "get_weather"}, {"content", "18 C"}});
  CHECK(param_of(b) == "messages[1]");  // a result with no call before it
}

TEST_CASE("legacy functions: a tool call answers as function_call, whole and streamed",
          "[admission]") {
  // A chat response or chunk with one choice (arrays spelled out: a one-element braced list
  // may be read as a copy of its element).
  const auto one_choice = [](json choice) { return json{{"choices", json::array({choice})}}; };
  const json call = {{"id", "call_1"},
                     {"type", "function"},
                     {"function", {{"name", "get_weather"}, {"arguments", "{}"}}}};
  json whole = one_choice(
      {{"index", 0},
       {"finish_reason", "tool_calls"},
       {"message",
        {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", json::array({call})}}}});
  legacy_functions_response(whole);
  const json& msg = whole["choices"][0]["message"];
  CHECK_FALSE(msg.contains("tool_calls"));
  CHECK(msg["function_call"] == json{{"name", "get_weather"}, {"arguments", "{}"}});
  CHECK(msg["content"].is_null());
  CHECK(whole["choices"][0]["finish_reason"] == "function_call");

  const json opening = {{"index", 0},
                        {"id", "call_1"},
                        {"type", "function"},
                        {"function", {{"name", "get_weather"}, {"arguments", ""}}}};
  json first = one_choice({{"index", 0},
                           {"finish_reason", nullptr},
                           {"delta", {{"tool_calls", json::array({opening})}}}});
  legacy_functions_chunk(first);
  CHECK(first["choices"][0]["delta"] ==
        json{{"function_call", {{"name", "get_weather"}, {"arguments", ""}}}});
  const json more = {{"index", 0}, {"function", {{"arguments", "{\""}}}};
  json piece = one_choice({{"index", 0}, {"delta", {{"tool_calls", json::array({more})}}}});
  legacy_functions_chunk(piece);
  CHECK(piece["choices"][0]["delta"] == json{{"function_call", {{"arguments", "{\""}}}});
  json last =
      one_choice({{"index", 0}, {"delta", json::object()}, {"finish_reason", "tool_calls"}});
  legacy_functions_chunk(last);
  CHECK(last["choices"][0]["finish_reason"] == "function_call");
  json text = one_choice({{"index", 0}, {"delta", {{"content", "Hi"}}}, {"finish_reason", "stop"}});
  const json before = text;
  legacy_functions_chunk(text);
  CHECK(text == before);  // text answers are as chat's
}

}  // namespace courier_test_actors_admission_openai_functions
