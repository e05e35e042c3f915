// tools and tool_choice: what a chat body's fields become, the 400s naming the field, and the
// grammar of forced calls in each family's syntax — its sentences are read back by that
// family's parser into calls whose arguments satisfy the function's schema.
#include "actors/admission/tool_calls.hpp"

#include <catch2/catch.hpp>

#include <random>

#include "actors/admission/api_error.hpp"
#include "grammar/matcher.hpp"
#include "grammar/random_walk.hpp"
#include "tests/grammar/json_schema_oracle.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_tool_calls {

using namespace courier;
using namespace courier::admission;
using nlohmann::ordered_json;
using text::parsers::tool_family;

namespace {

const ordered_json tools = ordered_json::parse(R"([
  {"type": "function", "function": {"name": "get_weather", "description": "Weather now",
   "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 10},
     "unit": {"enum": ["c", "f"]}}, "required": ["city", "unit"], "additionalProperties": false}}},
  {"type": "function", "function": {"name": "add", "strict": true,
   "parameters": {"type": "object", "properties": {"a": {"type": "integer", "minimum": 0,
     "maximum": 99}, "b": {"type": "integer", "minimum": 0, "maximum": 99}},
     "required": ["a", "b"]}}},
  {"type": "function", "function": {"name": "now"}}
])");

tool_request parse(ordered_json extra) {
  ordered_json body = {{"tools", tools}};
  for (auto& [k, v] : extra.items()) body[k] = v;
  return parse_tool_request(body);
}

api_error error_of(const ordered_json& body) {
  try {
    parse_tool_request(body);
  } catch (const api_error& e) {
    return e;
  }
  return api_error(0, "accepted");
}

std::shared_ptr<const grammar::compiled_grammar> forced(const tool_request& r, tool_family f) {
  grammar::compile_budget budget;
  return grammar::compile_gbnf(tool_call_gbnf(tool_call_spec(r, f).source, budget), budget);
}

}  // namespace

TEST_CASE("tool calls: tools and tool_choice as clients send them", "[admission]") {
  const tool_request automatic = parse(ordered_json::object());
  CHECK(automatic.names == std::vector<std::string>{"get_weather", "add", "now"});
  CHECK(automatic.mode == tool_choice_mode::automatic);
  CHECK(automatic.parallel);
  CHECK(parse({{"tool_choice", "none"}}).mode == tool_choice_mode::none);
  CHECK(parse({{"tool_choice", "required"}, {"parallel_tool_calls", false}}).mode ==
        tool_choice_mode::required);
  CHECK_FALSE(parse({{"parallel_tool_calls", false}}).parallel);
  const tool_request named =
      parse({{"tool_choice", {{"type", "function"}, {"function", {{"name", "add"}}}}}});
  CHECK(named.mode == tool_choice_mode::named);
  CHECK(named.named == "add");
  CHECK(parse_tool_request(ordered_json{{"tool_choice", "auto"}}).mode == tool_choice_mode::none);
}

TEST_CASE("tool calls: bad tools and tool_choice are 400s naming the field", "[admission]") {
  struct bad_case {
    ordered_json body;
    const char* param;
  };
  const std::vector<bad_case> cases = {
      {{{"tools", "x"}}, "tools"},
      {{{"tools", {{{"type", "web_search"}}}}}, "tools[0].type"},
      {{{"tools", {{{"type", "function"}}}}}, "tools[0].function"},
      {{{"tools", {{{"type", "function"}, {"function", {{"name", "a b"}}}}}}}, "tools[0].function.name"},
      {{{"tools", {{{"type", "function"}, {"function", {{"name", "f"}, {"parameters", 3}}}}}}},
       "tools[0].function.parameters"},
      {{{"tools", {{{"type", "function"}, {"function", {{"name", "f"}}}},
                   {{"type", "function"}, {"function", {{"name", "f"}}}}}}},
       "tools[1].function.name"},
      {{{"tools", tools}, {"tool_choice", "always"}}, "tool_choice"},
      {{{"tools", tools}, {"tool_choice", {{"type", "function"}, {"function", {{"name", "nope"}}}}}},
       "tool_choice"},
      {{{"tool_choice", "required"}}, "tool_choice"},
      {{{"tools", tools}, {"parallel_tool_calls", "yes"}}, "parallel_tool_calls"},
  };
  for (const auto& c : cases) {
    INFO(c.body.dump());
    const api_error e = error_of(c.body);
    CHECK(e.status == 400);
    CHECK(e.param == c.param);
  }
}

TEST_CASE("tool calls: forced calls are exactly the family's syntax with schema-valid arguments",
          "[admission][grammar]") {
  const tool_request required = parse({{"tool_choice", "required"}});
  const auto hermes = forced(required, tool_family::hermes);
  CHECK(grammar::full_match(hermes,
                            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
                            "\"Paris\", \"unit\": \"c\"}}\n</tool_call>"));
  CHECK(grammar::full_match(hermes,
                            "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>\n"
                            "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}"
                            "\n</tool_call>"));
  CHECK_FALSE(grammar::full_match(hermes, "Sure! <tool_call>"));
  CHECK_FALSE(grammar::full_match(
      hermes, "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 100, \"b\": 2}}\n</tool_call>"));
  // add is strict: no member beyond its properties.
  CHECK_FALSE(grammar::full_match(
      hermes, "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2, \"c\": 3}}\n</tool_call>"));
  CHECK_FALSE(grammar::full_match(hermes, "<tool_call>\n{\"name\": \"sub\", \"arguments\": {}}\n</tool_call>"));

  const tool_request single = parse({{"tool_choice", "required"}, {"parallel_tool_calls", false}});
  CHECK_FALSE(grammar::full_match(forced(single, tool_family::hermes),
                                  "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>\n"
                                  "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>"));
  const tool_request named =
      parse({{"tool_choice", {{"type", "function"}, {"function", {{"name", "add"}}}}}});
  const auto llama = forced(named, tool_family::llama3_json);
  CHECK(grammar::full_match(llama, R"({"name": "add", "parameters": {"a": 1, "b": 2}})"));
  CHECK_FALSE(grammar::full_match(llama, R"({"name": "now", "parameters": {}})"));
  CHECK_FALSE(grammar::full_match(llama, R"({"name": "add", "parameters": {"a": 1, "b": 2}}; {"name": "add", "parameters": {"a": 1, "b": 2}})"));
  const auto mistral = forced(required, tool_family::mistral);
  CHECK(grammar::full_match(
      mistral, R"([TOOL_CALLS][{"name": "now", "arguments": {}}, {"name": "add", "arguments": {"a": 0, "b": 99}}])"));
}

TEST_CASE("tool calls: random forced outputs parse back into valid calls in every family",
          "[admission][grammar]") {
  const tool_request required = parse({{"tool_choice", "required"}});
  std::mt19937_64 rng(7);
  for (const tool_family f : {tool_family::hermes, tool_family::llama3_json, tool_family::mistral}) {
    grammar::mask_cache cache(forced(required, f), grammar::byte_vocabulary());
    for (int i = 0; i < 20; ++i) {
      grammar::random_walk_options opts;
      opts.max_tokens = 600;
      const auto sentence = grammar::random_sentence(cache, rng, opts);
      if (!sentence) continue;
      INFO(*sentence);
      const text::parsers::parsed_output out = text::parsers::parse_tool_calls(f, *sentence);
      CHECK(out.content.empty());
      REQUIRE_FALSE(out.calls.empty());
      for (const auto& call : out.calls) {
        const auto it = std::find(required.names.begin(), required.names.end(), call.name);
        REQUIRE(it != required.names.end());
        const auto args = ordered_json::parse(call.arguments);
        ordered_json schema = required.parameters[static_cast<std::size_t>(it - required.names.begin())];
        schema.erase("$courier_strict");
        CHECK(grammar::testing::conforms(args, schema, schema));
      }
    }
  }
}

}  // namespace courier_test_actors_admission_tool_calls
