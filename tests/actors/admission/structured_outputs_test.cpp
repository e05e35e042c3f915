// The structured-output fields of a request body (OpenAI's response_format, vLLM's
// structured_outputs and guided_*, llama.cpp's grammar and json_schema), parsed against the
// bundled tiny Qwen3: what each compiles to, the 400s naming the field, one field at a time,
// the registry's cache.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "actors/admission/admission_server.hpp"
#include "actors/admission/api_request.hpp"
#include "actors/admission/grammar_vocabulary.hpp"
#include "grammar/matcher.hpp"
#include "grammar/token_mask.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/text_assets.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_structured_outputs {

using namespace courier;
using namespace courier::admission;
using nlohmann::ordered_json;

namespace {

// As `courier serve` configures it (the tokenizer, the template, the parsers it implies).
std::shared_ptr<admission_context> context(bool with_grammars, config::server_config cfg = {}) {
  auto ctx = std::make_shared<admission_context>();
  cfg.model.path = test::model_dir("tiny-qwen3");
  cfg.server.max_cached_grammars = 4;
  msg::engine_ready ready;
  ready.model_name = "tiny-qwen3";
  ready.max_model_len = 4096;
  ready.vocab_size = 151936;
  ready.eos_token_ids = {151645, 151643};
  test::use_shared_text_assets(*ctx, cfg.model.path);
  configure_context(*ctx, cfg, ready);
  if (!with_grammars) ctx->grammars = nullptr;
  return ctx;
}

const admission_context& ctx() {
  static const auto c = context(true);
  return *c;
}

ordered_json chat_body() {
  return {{"model", "tiny-qwen3"},
          {"messages", {{{"role", "user"}, {"content", "Hi"}}}},
          {"max_tokens", 4}};
}

api_request chat(const ordered_json& body, const admission_context& c = ctx()) {
  return parse_api_request(endpoint::chat, body.dump(), c);
}

api_error error_of(const ordered_json& body, endpoint kind = endpoint::chat,
                   const admission_context& c = ctx()) {
  try {
    parse_api_request(kind, body.dump(), c);
  } catch (const api_error& e) {
    return e;
  }
  return api_error(0, "accepted");
}

// Whether `text` is a complete sentence of the request's grammar.
bool allows(const api_request& r, const std::string& text) {
  REQUIRE(r.sampling.grammar);
  return grammar::full_match(r.sampling.grammar.masks->grammar_ptr(), text);
}

const char* const person_schema = R"({"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 8}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"], "additionalProperties": false})";

}  // namespace

TEST_CASE("structured outputs: response_format json_schema, json_object and text", "[admission]") {
  ordered_json body = chat_body();
  body["response_format"] = {{"type", "json_schema"},
                             {"json_schema", {{"name", "person"},
                                              {"schema", ordered_json::parse(person_schema)}}}};
  const api_request r = chat(body);
  CHECK(r.ignored_fields.empty());
  CHECK(allows(r, R"({"name": "Ada", "age": 36})"));
  CHECK_FALSE(allows(r, R"({"age": 36, "name": "Ada"})"));  // the schema's order
  CHECK_FALSE(allows(r, R"({"name": "Ada Lovelace", "age": 36})"));
  CHECK_FALSE(allows(r, R"({"name": "Ada", "age": -1})"));

  body["response_format"] = {{"type", "json_object"}};
  const api_request o = chat(body);
  CHECK(allows(o, R"({"any": [1, {"thing": null}]})"));
  CHECK_FALSE(allows(o, "[1]"));

  body["response_format"] = {{"type", "text"}};
  CHECK_FALSE(chat(body).sampling.grammar);
  body["response_format"] = nullptr;
  CHECK_FALSE(chat(body).sampling.grammar);
}

TEST_CASE("structured outputs: strict json_schema closes objects that do not say",
          "[admission]") {
  ordered_json body = chat_body();
  const auto open = ordered_json::parse(R"({"type": "object", "properties": {"a": {"type":
      "integer"}}, "required": ["a"]})");
  body["response_format"] = {{"type", "json_schema"},
                             {"json_schema", {{"name", "a"}, {"schema", open}, {"strict", true}}}};
  CHECK_FALSE(allows(chat(body), R"({"a": 1, "b": 2})"));
  body["response_format"]["json_schema"]["strict"] = false;
  CHECK(allows(chat(body), R"({"a": 1, "b": 2})"));
}

TEST_CASE("structured outputs: vLLM's and llama.cpp's fields", "[admission]") {
  struct field_case {
    const char* field;
    ordered_json value;
    const char* allowed;
    const char* refused;
  };
  const std::vector<field_case> cases = {
      {"guided_json", ordered_json::parse(person_schema), R"({"name":"A","age":1})", "{}"},
      {"guided_json", person_schema, R"({"name":"A","age":1})", "{}"},  // a string of JSON
      {"json_schema", ordered_json::parse(person_schema), R"({"name":"A","age":1})", "{}"},
      {"guided_regex", "[0-9]{3}-[a-z]+", "123-abc", "12-abc"},
      {"guided_choice", {"yes", "no"}, "no", "maybe"},
      {"guided_grammar", "root ::= \"a\" [b-c]+", "abcb", "a"},
      {"grammar", "root ::= \"x\" | \"y\"", "y", "xy"},
      {"structured_outputs", {{"regex", "a+"}}, "aaa", "b"},
      {"structured_outputs", {{"choice", {"left", "right"}}}, "right", "up"},
      {"structured_outputs", {{"json", ordered_json::parse(person_schema)}},
       R"({"name":"A","age":1})", "{}"},
      {"structured_outputs", {{"grammar", "root ::= \"z\"+"}}, "zz", ""},
      {"structured_outputs", {{"json_object", true}}, R"({"k":1})", "1"},
  };
  for (const auto& c : cases) {
    for (const endpoint kind : {endpoint::chat, endpoint::completions}) {
      INFO(c.field << ": " << c.value.dump());
      ordered_json body = chat_body();
      if (kind == endpoint::completions) {
        body.erase("messages");
        body["prompt"] = "Hi";
      }
      body[c.field] = c.value;
      const api_request r = parse_api_request(kind, body.dump(), ctx());
      CHECK(r.ignored_fields.empty());
      CHECK(allows(r, c.allowed));
      CHECK_FALSE(allows(r, c.refused));
    }
  }
}

TEST_CASE("structured outputs: a bad field is a 400 that names it", "[admission]") {
  struct bad_case {
    const char* field;
    ordered_json value;
    const char* param;
    const char* says;
  };
  const std::vector<bad_case> cases = {
      {"response_format", {{"type", "xml"}}, "response_format.type", "'xml' is not supported"},
      {"response_format", "json", "response_format", "expected an object"},
      {"response_format", {{"type", "json_schema"}}, "response_format.json_schema", "required"},
      {"response_format",
       {{"type", "json_schema"}, {"json_schema", {{"name", "x"}}}},
       "response_format.json_schema.schema",
       "is required"},
      {"response_format",
       {{"type", "json_schema"},
        {"json_schema", {{"name", "x"}, {"schema", {{"type", "string"}, {"contentEncoding", "base64"}}}}}},
       "response_format.json_schema.schema",
       "contentEncoding"},
      {"response_format",
       {{"type", "json_schema"}, {"json_schema", {{"schema", {{"type", "integer"}}}, {"strict", 1}}}},
       "response_format.json_schema.strict",
       "true or false"},
      {"guided_regex", "(unclosed", "guided_regex", ""},
      {"guided_regex", "", "guided_regex", "non-empty"},
      {"guided_choice", ordered_json::array(), "guided_choice", "non-empty list"},
      {"guided_choice", {"a", 1}, "guided_choice", "non-empty list"},
      {"guided_json", "{not json", "guided_json", "JSON Schema"},
      {"grammar", "root ::= undefined_rule", "grammar", "undefined_rule"},
      {"structured_outputs", {{"regex", "a"}, {"choice", {"b"}}}, "structured_outputs",
       "give one of"},
      {"structured_outputs", {{"structural_tag", "{}"}}, "structured_outputs.structural_tag",
       "not supported"},
      {"structured_outputs", "a", "structured_outputs", "expected an object"},
  };
  for (const auto& c : cases) {
    INFO(c.field << ": " << c.value.dump());
    ordered_json body = chat_body();
    body[c.field] = c.value;
    const api_error e = error_of(body);
    CHECK(e.status == 400);
    CHECK(e.param == c.param);
    CHECK_THAT(std::string(e.what()), Catch::Contains(c.says));
  }
}

TEST_CASE("structured outputs: one field at a time, and only with a tokenizer", "[admission]") {
  ordered_json body = chat_body();
  body["response_format"] = {{"type", "json_object"}};
  body["guided_regex"] = "a+";
  const api_error two = error_of(body);
  CHECK(two.status == 400);
  CHECK(two.param == "guided_regex");  // the second in the body's order
  CHECK_THAT(std::string(two.what()), Catch::Contains("already constrained by 'response_format'"));

  static const auto without = context(false);
  body.erase("guided_regex");
  const api_error no_tok = error_of(body, endpoint::chat, *without);
  CHECK(no_tok.status == 400);
  CHECK(no_tok.param == "response_format");
  CHECK_THAT(std::string(no_tok.what()), Catch::Contains("tokenizer"));
}

TEST_CASE("structured outputs: a spec compiles once and stays cached while used", "[admission]") {
  auto c = context(true);  // capacity 4
  grammar_registry& reg = *c->grammars;
  ordered_json body = chat_body();
  body["guided_regex"] = "q[0-9]+";
  const api_request a = chat(body, *c);
  const api_request b = chat(body, *c);
  CHECK(a.sampling.grammar.masks == b.sampling.grammar.masks);
  CHECK(a.sampling.grammar.key == b.sampling.grammar.key);
  CHECK(reg.compiled() == 1);
  for (const char* other : {"a", "b", "c", "d"}) {
    body["guided_regex"] = other;
    chat(body, *c);
  }
  CHECK(reg.size() == 4);
  body["guided_regex"] = "q[0-9]+";  // evicted by four others: compiled again
  const api_request again = chat(body, *c);
  CHECK(again.sampling.grammar.masks != a.sampling.grammar.masks);
  CHECK(reg.compiled() == 6);
  // The same schema with other whitespace between its tokens is another spec, the same
  // language.
  body.erase("guided_regex");
  body["guided_json"] = ordered_json::parse(person_schema);
  const api_request s1 = chat(body, *c);
  body["guided_json"] = person_schema;
  const api_request s2 = chat(body, *c);
  CHECK(s1.sampling.grammar.masks == s2.sampling.grammar.masks);  // both dump the same JSON
}

TEST_CASE("structured outputs: under cache_isolation tenant, a tenant never finds another's "
          "compiled grammar",
          "[admission]") {
  for (const bool isolate : {false, true}) {
    auto c = context(true);
    c->isolate_grammars = isolate;
    grammar_registry& reg = *c->grammars;
    ordered_json body = chat_body();
    body["guided_regex"] = "q[0-9]+";
    const api_request a = parse_api_request(endpoint::chat, body.dump(), *c, "tenant-a");
    const api_request b = parse_api_request(endpoint::chat, body.dump(), *c, "tenant-b");
    const api_request a2 = parse_api_request(endpoint::chat, body.dump(), *c, "tenant-a");
    // Forced tool calls compile a grammar too.
    ordered_json tools = chat_body();
    tools["tools"] = {{{"type", "function"},
                       {"function", {{"name", "f"}, {"parameters", {{"type", "object"}}}}}}};
    tools["tool_choice"] = "required";
    parse_api_request(endpoint::chat, tools.dump(), *c, "tenant-a");
    parse_api_request(endpoint::chat, tools.dump(), *c, "tenant-b");
    CHECK(a.sampling.grammar.masks == a2.sampling.grammar.masks);
    if (isolate) {
      CHECK(a.sampling.grammar.masks != b.sampling.grammar.masks);
      CHECK(reg.compiled() == 4);
    } else {
      CHECK(a.sampling.grammar.masks == b.sampling.grammar.masks);
      CHECK(reg.compiled() == 2);
    }
  }
}

TEST_CASE("structured outputs: a schema given as a string is held to server.max_json_depth",
          "[admission]") {
  // The reported crash: a schema string nested 60,000 levels (`{"a":{"a":...}}`).
  std::string deep;
  for (int i = 0; i < 60000; ++i) deep += "{\"a\":";
  deep += "{}";
  deep += std::string(60000, '}');
  for (const char* field : {"guided_json", "json_schema"}) {
    ordered_json body = chat_body();
    body[field] = deep;
    const api_error e = error_of(body);
    CHECK(e.status == 400);
    CHECK_THAT(e.what(), Catch::Contains(std::string("'") + field + "'") &&
                             Catch::Contains("server.max_json_depth"));
  }
  ordered_json body = chat_body();
  body["response_format"] = {{"type", "json_schema"},
                             {"json_schema", {{"name", "x"}, {"schema", deep}}}};
  CHECK_THAT(error_of(body).what(),
             Catch::Contains("response_format.json_schema.schema") &&
                 Catch::Contains("64 levels deep"));
  body.erase("response_format");
  body["structured_outputs"] = {{"json", deep}};
  CHECK_THAT(error_of(body).what(), Catch::Contains("structured_outputs.json"));
  // At the limit it is a schema like any other.
  std::string at_limit;
  for (int i = 0; i < 31; ++i) at_limit += "{\"properties\":{\"a\":";  // 2 levels each
  at_limit += "{\"type\":\"integer\"}";
  at_limit += std::string(2 * 31, '}');
  body.erase("structured_outputs");
  body["guided_json"] = at_limit;
  CHECK(chat(body).sampling.grammar);
}

TEST_CASE("structured outputs: a grammar past the compile limits is a 400 naming the field and "
          "the server.grammar_* key",
          "[admission]") {
  // Bombs from the hostile-input report, each refused within the default limits.
  ordered_json body = chat_body();
  body["guided_regex"] = "(a|a?){1,5000}";  // 5,000 parse stacks per step
  api_error e = error_of(body);
  CHECK(e.status == 400);
  CHECK(e.param == "guided_regex");
  CHECK_THAT(e.what(), Catch::Contains("server.grammar_max_branches"));
  body.erase("guided_regex");
  ordered_json props = ordered_json::object();
  for (int i = 0; i < 5000; ++i) props["p" + std::to_string(i)] = {{"type", "string"}};
  body["response_format"] = {
      {"type", "json_schema"},
      {"json_schema", {{"name", "x"}, {"schema", {{"type", "object"}, {"properties", props}}}}}};
  e = error_of(body);
  CHECK(e.status == 400);
  CHECK(e.param == "response_format.json_schema.schema");
  CHECK_THAT(e.what(), Catch::Contains("server.grammar_compile_"));
  // The configured limits are the ones applied: an ordinary schema under a tiny work limit.
  config::server_config cfg;
  cfg.server.grammar_compile_work = 1000;
  auto tight = context(true, cfg);
  ordered_json small = chat_body();
  small["guided_json"] = ordered_json::parse(person_schema);
  e = error_of(small, endpoint::chat, *tight);
  CHECK(e.status == 400);
  CHECK_THAT(e.what(), Catch::Contains("server.grammar_compile_work"));
  CHECK(chat(small).sampling.grammar);  // the default limits compile it
  // Forced tool calls go through the same limits.
  ordered_json tools = chat_body();
  tools["tools"] = {{{"type", "function"},
                     {"function", {{"name", "f"}, {"parameters", ordered_json::parse(person_schema)}}}}};
  tools["tool_choice"] = "required";
  e = error_of(tools, endpoint::chat, *tight);
  CHECK(e.param == "tools");
  CHECK_THAT(e.what(), Catch::Contains("server.grammar_compile_work"));
}

TEST_CASE("structured outputs: tool_choice required or named holds the output to calls",
          "[admission]") {
  ordered_json body = chat_body();
  body["tools"] = ordered_json::parse(R"([{"type": "function", "function": {"name": "f",
      "parameters": {"type": "object", "properties": {"x": {"type": "boolean"}},
      "required": ["x"], "additionalProperties": false}}}])");
  const api_request automatic = chat(body);
  // auto: free text, and a call once the model writes <tool_call>.
  CHECK(automatic.sampling.grammar.trigger == "<tool_call>");
  CHECK(automatic.sampling.grammar.trigger_repeats);
  CHECK(allows(automatic, "\n{\"name\": \"f\", \"arguments\": {\"x\": true}}\n</tool_call>"));
  CHECK_FALSE(allows(automatic, "\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>"));
  body["parallel_tool_calls"] = false;
  CHECK_FALSE(chat(body).sampling.grammar.trigger_repeats);
  body.erase("parallel_tool_calls");
  REQUIRE(automatic.read_tool_calls);
  CHECK(*automatic.read_tool_calls == text::parsers::tool_family::hermes);  // Qwen3's template
  CHECK(automatic.read_reasoning);  // it writes <think>
  CHECK_FALSE(automatic.starts_in_reasoning);

  body["tool_choice"] = "required";
  const api_request required = chat(body);
  CHECK(allows(required, "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": true}}\n</tool_call>"));
  CHECK_FALSE(allows(required, "Hello"));
  body["tool_choice"] = {{"type", "function"}, {"function", {{"name", "f"}}}};
  CHECK(allows(chat(body), "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": false}}\n</tool_call>"));
  body["tool_choice"] = "none";
  CHECK_FALSE(chat(body).read_tool_calls);
  CHECK_FALSE(chat(body).sampling.grammar);
  body["tool_choice"] = "auto";
  body["response_format"] = {{"type", "json_object"}};  // holds the whole output: no trigger
  CHECK(chat(body).sampling.grammar.trigger.empty());
  body.erase("response_format");

  body["tool_choice"] = "required";
  body["response_format"] = {{"type", "json_object"}};
  const api_error both = error_of(body);
  CHECK(both.status == 400);
  CHECK(both.param == "tool_choice");
}

}  // namespace courier_test_actors_admission_structured_outputs
