// JSON Schema to GBNF, as languages: for each construct, texts the compiled grammar must accept
// (each also parsed as JSON and checked against the schema by json_schema_oracle.hpp) and texts
// it must reject. Bounds, strings and formats are in json_schema_bounds_test.cpp, errors in
// json_schema_errors_test.cpp.
#include "grammar/json_schema.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <nlohmann/json.hpp>
#include <string>

#include "grammar/gbnf.hpp"
#include "tests/grammar/json_schema_oracle.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_grammar_json_schema {

using namespace courier::grammar;
using namespace courier::grammar::testing;

namespace {

json_schema_options compact() {
  json_schema_options o;
  o.compact = true;
  return o;
}

}  // namespace

TEST_CASE("json schema: each type name allows exactly the values of that type", "[grammar]") {
  check_language(R"({"type": "string"})", {R"("")", R"("abc")", R"("é ☃ 😀")"},
                 {"abc", R"("a)", "1", "null", R"(["a"])"});
  check_language(R"({"type": "integer"})", {"0", "-0", "7", "-12", "12345678901234567890"},
                 {"1.5", "1e3", "01", "+1", "-", R"("1")", ""});
  check_language(R"({"type": "number"})",
                 {"0", "-0", "1.5", "-0.25", "1e3", "1E-3", "2.5e+10", "123"},
                 {"1.", ".5", "01", "1e", "+1", "NaN", "Infinity", "0x10"});
  check_language(R"({"type": "boolean"})", {"true", "false"}, {"True", "1", "null", "\"true\""});
  check_language(R"({"type": "null"})", {"null"}, {"nul", "None", "0", "\"null\""});
}

TEST_CASE("json schema: an empty schema and the schema true allow any JSON value", "[grammar]") {
  for (const char* schema : {"{}", "true", R"({"description": "anything"})"}) {
    check_language(
        schema,
        {"null", "1.5", R"("x")", "[]", "{}", R"({"a": [1, {"b": null}], "c": true})", "[[[]]]"},
        {"", "[1,]", "{,}", R"({"a"})", "[1 2]", "{1: 2}", "nul"});
  }
}

TEST_CASE("json schema: a string allows JSON's escapes and no raw control characters",
          "[grammar]") {
  check_language(R"({"type": "string"})",
                 {R"("a\"b")", R"("\\")", R"("\/")", R"("\b\f\n\r\t")", R"("\u00e9\u00E9")",
                  R"("\ud83d\ude00")", R"("\uFFFF")"},
                 {"\"a\nb\"", "\"\t\"", std::string("\"\x01\""), R"("\x41")", R"("\a")",
                  R"("\u12")", R"("\ud83d")", R"("\ude00")", R"("\ud83dx")", R"("\")"});
}

TEST_CASE("json schema: a list of types allows a value of any of them", "[grammar]") {
  check_language(R"({"type": ["string", "null"]})", {R"("a")", "null"}, {"1", "true", "[]"});
  check_language(R"({"type": ["integer", "number"]})", {"1", "1.5"}, {"\"1\""});
  check_language(R"({"type": "string", "nullable": true})", {R"("a")", "null"}, {"1"});
}

TEST_CASE("json schema: a schema without type is of the type its keywords constrain", "[grammar]") {
  check_language(R"({"properties": {"a": {"type": "integer"}}})", {"{}", R"({"a": 1})"},
                 {R"("a")", "1", "null", R"({"a": "x"})"});
  check_language(R"({"items": {"type": "integer"}})", {"[]", "[1, 2]"}, {"{}", "1", "[\"x\"]"});
  check_language(R"({"minLength": 2})", {R"("ab")"}, {R"("a")", "12"});
  check_language(R"({"minimum": 2})", {"2", "3.5"}, {"1", "\"3\""});
}

TEST_CASE("json schema: enum and const allow exactly their values", "[grammar]") {
  check_language(R"({"enum": ["red", "green", 3, null, true, {"a": [1]}, [1, "x"]]})",
                 {R"("red")", R"("green")", "3", "null", "true", R"({"a":[1]})", R"([1,"x"])"},
                 {R"("blue")", R"("Red")", "4", "false", R"("3")", R"({"a":[2]})"});
  check_language(R"({"const": "only"})", {R"("only")"}, {R"("other")", R"("onl")"});
  check_language(R"({"const": {"k": "v\n\"q\""}})", {R"({"k":"v\n\"q\""})"}, {R"({"k":"v"})"});
  check_language(R"({"enum": ["é", "a/b"]})", {R"("é")", R"("a/b")"}, {R"("\u00e9")"});
}

TEST_CASE("json schema: enum values not of the schema's type are left out", "[grammar]") {
  check_language(R"({"type": "string", "enum": ["a", 1, null]})", {R"("a")"}, {"1", "null"});
  check_language(R"({"type": "integer", "enum": [1, 1.5, 2.0]})", {"1", "2.0"}, {"1.5"});
  check_language(R"({"enum": ["a", "b"], "const": "b"})", {R"("b")"}, {R"("a")"});
}

TEST_CASE("json schema: required properties must come, in the schema's order", "[grammar]") {
  const char* schema = R"({"type": "object", "properties": {"b": {"type": "integer"},
    "a": {"type": "string"}}, "required": ["b", "a"], "additionalProperties": false})";
  check_language(
      schema,
      {R"({"b":1,"a":"x"})", R"({ "b" : 1 , "a" : "x" })", "{\n  \"b\": 1,\n  \"a\": \"\"\n}"},
      {R"({"a":"x","b":1})", R"({"b":1})", R"({"a":"x"})", "{}", R"({"b":1,"a":"x",})",
       R"({"b":1,,"a":"x"})", R"({"b":1,"a":"x","c":2})", R"({"b":"1","a":"x"})"});
}

TEST_CASE("json schema: optional properties may each be left out, with commas only between",
          "[grammar]") {
  const char* schema = R"({"type": "object", "properties": {"a": {"type": "integer"},
    "b": {"type": "integer"}, "c": {"type": "integer"}, "d": {"type": "integer"}},
    "required": ["c"], "additionalProperties": false})";
  check_language(schema,
                 {R"({"c":3})", R"({"a":1,"c":3})", R"({"b":2,"c":3})", R"({"a":1,"b":2,"c":3})",
                  R"({"c":3,"d":4})", R"({"a":1,"b":2,"c":3,"d":4})", R"({"b":2,"c":3,"d":4})"},
                 {"{}", R"({"a":1})", R"({"a":1,"d":4})", R"({,"c":3})", R"({"c":3,})",
                  R"({"b":2,"a":1,"c":3})", R"({"c":3,"a":1})", R"({"a":1"c":3})"});
  const char* all_optional = R"({"type": "object", "properties": {"a": {"type": "integer"},
    "b": {"type": "integer"}, "c": {"type": "integer"}}, "additionalProperties": false})";
  check_language(all_optional,
                 {"{}", "{ }", R"({"a":1})", R"({"b":2})", R"({"c":3})", R"({"a":1,"c":3})",
                  R"({"b":2,"c":3})", R"({"a":1,"b":2,"c":3})"},
                 {R"({,})", R"({"a":1,})", R"({,"b":2})", R"({"c":3,"a":1})", R"({"x":1})"});
}

TEST_CASE("json schema: extra members follow the declared ones when additionalProperties allows",
          "[grammar]") {
  check_language(R"({"type": "object", "properties": {"a": {"type": "integer"}},
                    "additionalProperties": true})",
                 {"{}", R"({"a":1})", R"({"a":1,"x":[null]})", R"({"x":"y","z":{}})",
                  R"({"a":1,"x":2,"y":3})"},
                 {R"({"x":1,"a":1})", R"({"a":1,"x"})", R"({"a":1,"x":2,})"});
  check_language(R"({"type": "object", "properties": {"a": {"type": "integer"}},
                    "required": ["a"], "additionalProperties": {"type": "string"}})",
                 {R"({"a":1})", R"({"a":1,"x":"s","y":"t"})"},
                 {R"({"a":1,"x":2})", R"({"x":"s"})", R"({"x":"s","a":1})"});
  check_language(R"({"type": "object", "additionalProperties": {"type": "integer"}})",
                 {"{}", R"({"k":1})", R"({"k":1,"j":2})"}, {R"({"k":"1"})"});
}

TEST_CASE("json schema: an extra member may not take a declared property's name", "[grammar]") {
  check_language(R"({"type": "object", "properties": {"a": {"type": "integer"},
                    "ab": {"type": "integer"}, "é": {"type": "integer"},
                    "q\"": {"type": "integer"}, "\n": {"type": "integer"}}})",
                 {R"({"b":true})", R"({"":1})", R"({"abc":"x"})", R"({"a":1,"x":"y"})",
                  R"({"aa":"x"})", R"({"éé":"x"})", R"({"q":"x"})", R"({"q\"\"":"x"})",
                  R"({"\n\n":"x"})", R"({"A":"x"})", R"({"\u0062":"x"})"},
                 {R"({"a":"x"})", R"({"ab":"x"})", R"({"é":"x"})", R"({"q\"":"x"})",
                  R"({"\n":"x"})", R"({"a":1,"a":2})", R"({"b":1,"a":1})", R"({"ab":1,"a":1})"});
  check_language(R"({"type": "object", "required": ["id"], "additionalProperties":
                    {"type": "string"}})",
                 {R"({"id":"1"})", R"({"id":"1","i":"2","idd":"3"})"},
                 {R"({"id":"1","id":"2"})", R"({"i":"2","id":"1"})"});
}

TEST_CASE("json schema: extra keys exclude many declared names, or past a limit none",
          "[grammar]") {
  // 50 names of about 20 bytes fit the exclusion's DFA; 100 do not.
  for (const int num_names : {50, 100}) {
    ojson schema = {{"type", "object"}, {"properties", ojson::object()}};
    for (int i = 0; i < num_names; ++i) {
      schema["properties"]["é_" + std::to_string(i) + "_with_a_long_suffix"] = {
          {"type", "integer"}};
    }
    INFO(num_names << " names");
    const schema_language l = compile_schema(schema.dump());
    check_accepts(l, R"({"é_7_with_a_long_suffix":1,"other":"x"})");
    check_accepts(l, R"({"é_7_with_a_long":"x"})");
    // Past the limit an extra member may reuse a declared name.
    CHECK(full_match(l.grammar, R"({"é_7_with_a_long_suffix":"x"})") == (num_names == 100));
  }
}

TEST_CASE("json schema: default_additional_properties decides for a schema that does not say",
          "[grammar]") {
  const char* schema = R"({"type": "object", "properties": {"a": {"type": "integer"}}})";
  json_schema_options strict;
  strict.default_additional_properties = false;
  check_language(schema, {"{}", R"({"a":1})"}, {R"({"a":1,"b":2})", R"({"b":2})"}, strict);
  check_language(schema, {R"({"a":1,"b":2})", R"({"b":2})"}, {}, {});
  // A schema that says nothing about the value allows any, objects with any members included.
  check_language(R"({"type": "object", "properties": {"a": {}, "b": true}})",
                 {R"({"a":{"x":1},"b":{"y":[{"z":2}]}})"}, {R"({"a":1,"c":2})"}, strict);
}

TEST_CASE("json schema: a required name without a schema takes additionalProperties' schema",
          "[grammar]") {
  check_language(R"({"type": "object", "properties": {"a": {"type": "integer"}},
                    "required": ["z"], "additionalProperties": {"type": "boolean"}})",
                 {R"({"z":true})", R"({"a":1,"z":false})", R"({"a":1,"z":false,"y":true})"},
                 {R"({"a":1})", R"({"z":1})", "{}"});
}

TEST_CASE("json schema: a property with the schema false may not appear", "[grammar]") {
  check_language(R"({"type": "object", "properties": {"a": false, "b": {"type": "integer"}},
                    "additionalProperties": false})",
                 {"{}", R"({"b":1})"}, {R"({"a":1})", R"({"a":1,"b":1})"});
}

TEST_CASE("json schema: objects nest, and property names are escaped as JSON strings",
          "[grammar]") {
  check_language(R"({"type": "object", "properties": {"say \"hi\"": {"type": "object",
                    "properties": {"x/y": {"type": "null"}, "é": {"type": "boolean"}},
                    "required": ["x/y", "é"], "additionalProperties": false}},
                    "required": ["say \"hi\""], "additionalProperties": false})",
                 {R"({"say \"hi\"":{"x/y":null,"é":true}})"},
                 {R"({"say "hi"":{"x/y":null,"é":true}})", R"({"say \"hi\"":{"x/y":null}})",
                  R"({"say \"hi\"":{"é":true,"x/y":null}})"});
}

TEST_CASE("json schema: items, minItems and maxItems bound an array", "[grammar]") {
  check_language(R"({"type": "array", "items": {"type": "integer"}})",
                 {"[]", "[ ]", "[1]", "[1,2,3]", "[ 1 , 2 ]"},
                 {"[", "[1,]", "[,1]", "[1 2]", R"([1,"2"])", "[1,,2]"});
  check_language(R"({"type": "array", "items": {"type": "integer"}, "minItems": 2,
                    "maxItems": 3})",
                 {"[1,2]", "[1,2,3]"}, {"[]", "[1]", "[1,2,3,4]"});
  check_language(R"({"type": "array", "minItems": 1})", {"[null]", R"([1,"a",{}])"}, {"[]"});
  check_language(R"({"type": "array", "maxItems": 0})", {"[]"}, {"[1]"});
  check_language(R"({"type": "array", "items": false})", {"[]"}, {"[1]"});
}

TEST_CASE("json schema: prefixItems fix the first items, and items the rest", "[grammar]") {
  check_language(R"({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
                    "items": false})",
                 {"[]", "[1]", R"([1,"a"])"}, {R"(["a"])", R"([1,"a",2])", R"([1,2])"});
  check_language(R"({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
                    "items": {"type": "boolean"}, "minItems": 3})",
                 {R"([1,"a",true])", R"([1,"a",true,false])"},
                 {R"([1,"a"])", R"([1,"a",1])", R"([1,true,true])"});
  check_language(R"({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"},
                    {"type": "null"}], "minItems": 2, "maxItems": 2})",
                 {R"([1,"a"])"}, {"[1]", R"([1,"a",null])"});
  check_language(R"({"type": "array", "prefixItems": [{"type": "integer"}]})",
                 {"[]", "[1]", R"([1,"anything",{}])"}, {R"(["a"])"});
}

TEST_CASE("json schema: many optional prefix items still make a grammar", "[grammar]") {
  ojson schema = {{"type", "array"}, {"prefixItems", ojson::array()}, {"items", false}};
  std::string all = "[";
  for (int i = 0; i < 100; ++i) {
    schema["prefixItems"].push_back({{"const", i}});
    all += (i ? "," : "") + std::to_string(i);
  }
  all += "]";
  const schema_language l = compile_schema(schema.dump());
  check_accepts(l, "[]");
  check_accepts(l, "[0,1,2]");
  check_accepts(l, all);
  check_rejects(l, "[1]");
  check_rejects(l, "[0,2]");
}

TEST_CASE("json schema: anyOf and oneOf allow a value of any branch", "[grammar]") {
  check_language(R"({"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 1}]})",
                 {"1", R"("a")"}, {R"("ab")", "null"});
  check_language(R"({"oneOf": [{"type": "object", "properties": {"k": {"const": "a"}},
                    "required": ["k"], "additionalProperties": false}, {"type": "null"}]})",
                 {R"({"k":"a"})", "null"}, {R"({"k":"b"})", "{}"});
  check_language(R"({"anyOf": [{"type": "integer"}, false]})", {"1"}, {"null"});
  check_language(R"({"allOf": [{"type": "boolean"}], "title": "t"})", {"true"}, {"1"});
}

TEST_CASE("json schema: $ref reaches $defs and definitions, percent-encoded or not", "[grammar]") {
  check_language(R"({"$defs": {"id": {"type": "integer"}}, "definitions": {"name":
                    {"type": "string"}}, "type": "object", "properties": {"i": {"$ref":
                    "#/$defs/id"}, "n": {"$ref": "#/definitions/name"}, "j": {"$ref":
                    "#/%24defs/id"}}, "additionalProperties": false})",
                 {R"({"i":1,"n":"x","j":2})"}, {R"({"i":"1"})", R"({"n":1})", R"({"j":"x"})"});
  check_language(R"({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"},
                    "b": {"description": "d", "$ref": "#/$defs/c"}, "c": {"type": "null"}}})",
                 {"null"}, {"1"});
  // Two references to one target at the start of a value: shared, not a cycle.
  check_language(R"({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/b"}, {"$ref": "#/$defs/c"}]},
                    "b": {"$ref": "#/$defs/d"}, "c": {"allOf": [{"$ref": "#/$defs/d"}]},
                    "d": {"type": "null"}}, "$ref": "#/$defs/a"})",
                 {"null"}, {"1"});
}

TEST_CASE("json schema: a $ref cycle becomes a recursive rule", "[grammar]") {
  const char* list = R"({"$defs": {"node": {"type": "object", "properties": {"v": {"type":
    "integer"}, "next": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]}}, "required":
    ["v", "next"], "additionalProperties": false}}, "$ref": "#/$defs/node"})";
  std::string deep = "null";
  for (int i = 0; i < 200; ++i) deep = R"({"v":)" + std::to_string(i) + R"(,"next":)" + deep + "}";
  check_language(list, {R"({"v":1,"next":null})", R"({"v":1,"next":{"v":2,"next":null}})", deep},
                 {R"({"v":1})", R"({"v":1,"next":{"v":2}})", R"({"v":1,"next":{}})"});
  const char* tree = R"({"type": "object", "properties": {"name": {"type": "string"},
    "children": {"type": "array", "items": {"$ref": "#"}}}, "required": ["name"],
    "additionalProperties": false})";
  check_language(
      tree,
      {R"({"name":"a"})", R"({"name":"a","children":[]})",
       R"({"name":"a","children":[{"name":"b","children":[{"name":"c"}]},{"name":"d"}]})"},
      {R"({"name":"a","children":[{}]})", R"({"name":"a","children":[1]})"});
}

TEST_CASE("json schema: whitespace is one space or a line break and an indentation",
          "[grammar]") {
  const char* schema = R"({"type": "object", "properties": {"a": {"type": "array", "items":
    {"type": "integer"}}}, "required": ["a"], "additionalProperties": false})";
  const std::string indent20(20, ' ');
  const std::string indent21(21, ' ');
  check_language(schema,
                 {R"({"a":[1,2]})", R"({ "a" : [ 1 , 2 ] })", "{\n\t\"a\":\n[\n  1,\n  2\n] }",
                  "{\n" + indent20 + R"("a":[]})", "{\n" + indent20.substr(1) + "\t\"a\":[]}"},
                 {"{\n" + indent21 + R"("a":[]})", R"({   "a":[]})", "{\n\n\n\"a\":[]}",
                  "{\t\"a\":[]}", R"( {"a":[]})", R"({"a":[]} )", "{\r\"a\":[]}"});
  check_language(schema, {R"({"a":[1,2]})", R"({"a":[]})"},
                 {R"({ "a":[]})", R"({"a": []})", R"({"a":[1, 2]})", R"({"a":[] })"}, compact());
  json_schema_options two;
  two.max_whitespace = 2;
  check_language(schema, {"{\n  \"a\":[]}"}, {"{\n   \"a\":[]}"}, two);
}

TEST_CASE("json schema: json_object_gbnf allows any object and nothing else", "[grammar]") {
  for (const bool is_compact : {false, true}) {
    json_schema_options o;
    o.compact = is_compact;
    const auto g = compile_gbnf(json_object_gbnf(o));
    for (const char* text : {"{}", R"({"a":1})", R"({"a":{"b":[1,2,{"c":null}]},"d":"e"})"}) {
      INFO(text);
      CHECK(full_match(g, text));
    }
    for (const char* text : {"[]", "1", R"("{}")", "{", R"({"a":1,})", R"({a:1})"}) {
      INFO(text);
      CHECK_FALSE(full_match(g, text));
    }
    CHECK(full_match(g, R"({ "a" : 1 })") == !is_compact);
  }
}

TEST_CASE("json schema: properties follow the schema's order only through ordered_json",
          "[grammar]") {
  const std::string text = R"({"type": "object", "properties": {"zeta": {"type": "integer"},
    "alpha": {"type": "integer"}}, "required": ["zeta", "alpha"], "additionalProperties": false})";
  const auto ordered = compile_gbnf(json_schema_to_gbnf(nlohmann::ordered_json::parse(text)));
  CHECK(full_match(ordered, R"({"zeta":1,"alpha":2})"));
  CHECK_FALSE(full_match(ordered, R"({"alpha":2,"zeta":1})"));
  // nlohmann::json keeps an object's keys sorted: its schema order is alphabetical.
  const auto sorted = compile_gbnf(json_schema_to_gbnf(nlohmann::json::parse(text)));
  CHECK(full_match(sorted, R"({"alpha":2,"zeta":1})"));
  CHECK_FALSE(full_match(sorted, R"({"zeta":1,"alpha":2})"));
}

TEST_CASE("json schema: the grammar's rule names are GBNF names and root comes first",
          "[grammar]") {
  const std::string gbnf = json_schema_to_gbnf(nlohmann::ordered_json::parse(
      R"({"$defs": {"my thing!": {"type": "object", "properties": {"x y": {"type": "object"}}}},
          "type": "array", "items": {"$ref": "#/$defs/my thing!"}})"));
  CHECK(gbnf.rfind("root ::= ", 0) == 0);
  for (const gbnf_rule& rule : parse_gbnf(gbnf)) {
    INFO(rule.name);
    CHECK(std::all_of(rule.name.begin(), rule.name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
    }));
  }
}

}  // namespace courier_test_grammar_json_schema
