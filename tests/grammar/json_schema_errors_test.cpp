// JSON Schema to GBNF: what is refused, and that the error says what and where (a JSON
// pointer), never a silent ignore.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "grammar/grammar_error.hpp"
#include "grammar/json_schema.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_grammar_json_schema_errors {

using namespace courier::grammar;
using Catch::Matchers::Contains;

namespace {

std::string convert(const std::string& schema_text) {
  return json_schema_to_gbnf(nlohmann::ordered_json::parse(schema_text));
}

// The message of the grammar_error converting `schema_text` throws ("" if none).
std::string error_of(const std::string& schema_text) {
  try {
    convert(schema_text);
  } catch (const grammar_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("json schema: an unsupported keyword is an error naming it and where it is",
          "[grammar]") {
  CHECK(error_of(R"({"type": "object", "properties": {"a": {"not": {"type": "null"}}}})") ==
        "json schema: unsupported keyword 'not' at /properties/a");
  CHECK(error_of(R"({"type": "array", "items": {"type": "string", "contentEncoding": "x"}})") ==
        "json schema: unsupported keyword 'contentEncoding' at /items");
  CHECK_THAT(error_of(R"({"patternProperties": {}})"),
             Contains("'patternProperties'") && Contains("at the root"));
  CHECK_THAT(error_of(R"({"type": "number", "multipleOf": 2})"), Contains("'multipleOf'"));
  CHECK_THAT(error_of(R"({"anyOf": [{"type": "string"}, {"if": {}}]})"),
             Contains("'if'") && Contains("/anyOf/1"));
  CHECK_THAT(error_of(R"({"properties": {"a/b~c": {"uniqueItems": true}}})"),
             Contains("/properties/a~1b~0c"));
}

TEST_CASE("json schema: annotations are accepted and change nothing", "[grammar]") {
  const std::string plain = convert(R"({"type": "object", "properties": {"a": {"type":
    "integer"}}, "required": ["a"]})");
  const std::string annotated =
      convert(R"({"$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "x", "title": "T", "description": "D", "$comment": "c", "strict": true, "type":
    "object", "properties": {"a": {"type": "integer", "default": 1, "examples": [2],
    "deprecated": false, "readOnly": true, "writeOnly": false}}, "required": ["a"]})");
  CHECK(plain == annotated);
}

TEST_CASE("json schema: a keyword's value of the wrong type is an error", "[grammar]") {
  CHECK_THAT(error_of(R"({"type": "array", "minItems": "x"})"),
             Contains("'minItems' must be a non-negative integer") && Contains("/minItems"));
  CHECK_THAT(error_of(R"({"type": "array", "maxItems": -1})"), Contains("'maxItems'"));
  CHECK_THAT(error_of(R"({"type": "string", "minLength": 1.5})"), Contains("'minLength'"));
  CHECK_THAT(error_of(R"({"type": "object", "required": 3})"),
             Contains("'required' must be an array of strings"));
  CHECK_THAT(error_of(R"({"type": "object", "required": ["a", 1]})"), Contains("'required'"));
  CHECK_THAT(error_of(R"({"type": 5})"), Contains("'type'"));
  CHECK_THAT(error_of(R"({"type": []})"), Contains("'type'"));
  CHECK_THAT(error_of(R"({"type": "text"})"), Contains("unknown type \"text\""));
  CHECK_THAT(error_of(R"({"properties": []})"), Contains("'properties' must be an object"));
  CHECK_THAT(error_of(R"({"items": [{"type": "string"}]})"), Contains("'items'"));
  CHECK_THAT(error_of(R"({"additionalProperties": "no"})"), Contains("'additionalProperties'"));
  CHECK_THAT(error_of(R"({"pattern": 3})"), Contains("'pattern' must be a string"));
  CHECK_THAT(error_of(R"({"minimum": "0"})"), Contains("'minimum' must be a number"));
  CHECK_THAT(error_of(R"({"anyOf": []})"), Contains("'anyOf'"));
  CHECK_THAT(error_of(R"({"anyOf": {}})"), Contains("'anyOf'"));
  CHECK_THAT(error_of(R"({"nullable": "yes"})"), Contains("'nullable'"));
  CHECK_THAT(error_of(R"({"$ref": 1})"), Contains("'$ref'"));
  CHECK_THAT(error_of(R"({"properties": {"a": 3}})"),
             Contains("must be an object or a boolean") && Contains("/properties/a"));
  CHECK_THAT(error_of("[]"), Contains("must be an object or a boolean"));
}

TEST_CASE("json schema: contradictions are errors", "[grammar]") {
  CHECK_THAT(error_of(R"({"type": "array", "minItems": 3, "maxItems": 2})"),
             Contains("minItems 3 is more than maxItems 2"));
  CHECK_THAT(error_of(R"({"type": "array", "items": false, "prefixItems": [{}], "minItems": 2})"),
             Contains("minItems 2 cannot be met"));
  CHECK_THAT(error_of(R"({"type": "string", "minLength": 3, "maxLength": 2})"),
             Contains("minLength 3 is more than maxLength 2"));
  CHECK_THAT(error_of(R"({"enum": []})"), Contains("'enum' is empty"));
  CHECK_THAT(error_of(R"({"type": "string", "enum": [1, 2]})"), Contains("allows no value"));
  CHECK_THAT(error_of(R"({"const": 1, "enum": [2]})"), Contains("allows no value"));
  CHECK_THAT(error_of(R"({"type": "integer", "minimum": 5, "maximum": 4})"),
             Contains("no integer lies between"));
  CHECK_THAT(error_of(R"({"type": "integer", "minimum": 4.2, "maximum": 4.8})"),
             Contains("no integer lies between"));
  CHECK_THAT(error_of(R"({"type": "number", "minimum": 4, "exclusiveMaximum": 4})"),
             Contains("no number lies between"));
  CHECK_THAT(error_of(R"({"type": "object", "properties": {"a": false}, "required": ["a"]})"),
             Contains("required property 'a' has the schema false") && Contains("/properties/a"));
  CHECK_THAT(error_of(R"({"type": "object", "required": ["a"], "additionalProperties": false})"),
             Contains("required property 'a' is not in 'properties'"));
  CHECK_THAT(error_of("false"), Contains("the schema false allows no value"));
  CHECK_THAT(error_of(R"({"anyOf": [false, false]})"), Contains("every schema of 'anyOf'"));
  CHECK_THAT(error_of(R"({"type": "number", "exclusiveMinimum": true})"),
             Contains("'exclusiveMinimum' true needs a bound"));
}

TEST_CASE("json schema: bounds a grammar cannot express are errors, not ignored", "[grammar]") {
  CHECK_THAT(error_of(R"({"type": "number", "minimum": 0.5})"),
             Contains("'minimum' 0.5 is unsupported for a number") && Contains("at /minimum"));
  CHECK_THAT(error_of(R"({"type": "number", "exclusiveMaximum": 1e30})"),
             Contains("'exclusiveMaximum'"));
  CHECK_THAT(error_of(R"({"type": "integer", "maximum": 1e25})"),
             Contains("'maximum' 1e+25 is unsupported for an integer"));
  CHECK_THAT(error_of(R"({"type": "integer", "minimum": -1e20})"), Contains("'minimum'"));
  CHECK_THAT(error_of(R"({"type": "array", "maxItems": 20000})"),
             Contains("minItems or maxItems over 10000"));
  CHECK_THAT(error_of(R"({"type": "string", "minLength": 10001})"),
             Contains("minLength or maxLength over 10000"));
}

TEST_CASE("json schema: combinations the converter does not intersect are errors", "[grammar]") {
  CHECK_THAT(error_of(R"({"type": "string", "pattern": "a", "maxLength": 3})"),
             Contains("'pattern' beside"));
  CHECK_THAT(error_of(R"({"type": "string", "format": "date", "minLength": 3})"),
             Contains("'format' beside"));
  CHECK_THAT(error_of(R"({"enum": ["a", "bb"], "maxLength": 1})"),
             Contains("keyword 'maxLength' beside 'enum'"));
  CHECK_THAT(error_of(R"({"type": "object", "anyOf": [{"required": ["a"]}]})"),
             Contains("keyword 'type' beside 'anyOf'"));
  CHECK_THAT(error_of(R"({"$ref": "#/$defs/a", "maxLength": 3, "$defs": {"a": {}}})"),
             Contains("keyword 'maxLength' beside '$ref'"));
  CHECK_THAT(error_of(R"({"allOf": [{"type": "string"}, {"maxLength": 3}]})"),
             Contains("'allOf' with more than one schema"));
  CHECK_THAT(error_of(R"({"type": "string", "format": "hostname"})"),
             Contains("unsupported format 'hostname'") && Contains("/format"));
}

TEST_CASE("json schema: an invalid pattern is an error at the pattern", "[grammar]") {
  CHECK_THAT(error_of(R"({"properties": {"p": {"type": "string", "pattern": "(a"}}})"),
             Contains("invalid pattern") && Contains("/properties/p/pattern"));
  CHECK_THAT(error_of(R"({"type": "string", "pattern": "(a)\\1"})"), Contains("invalid pattern"));
}

TEST_CASE("json schema: a $ref must point within the schema, and not only to itself", "[grammar]") {
  CHECK_THAT(error_of(R"({"$ref": "https://example.com/schema.json"})"),
             Contains("$ref 'https://example.com/schema.json' is unsupported"));
  CHECK_THAT(error_of(R"({"$ref": "#anchor"})"), Contains("is unsupported"));
  CHECK_THAT(error_of(R"({"$ref": "#/$defs/missing"})"), Contains("points to nothing"));
  CHECK_THAT(error_of(R"({"$ref": "#/$defs/a~2", "$defs": {}})"),
             Contains("not a valid JSON pointer"));
  CHECK_THAT(error_of(R"({"$ref": "#"})"), Contains("$ref cycle"));
  CHECK_THAT(error_of(R"({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [{"type":
                      "null"}, {"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"})"),
             Contains("$ref cycle") && Contains("/$defs/"));
  CHECK_THAT(error_of(R"({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/b"}, {"type": "null"}]},
                      "b": {"nullable": true, "$ref": "#/$defs/a"}}, "type": "array", "items":
                      {"$ref": "#/$defs/a"}})"),
             Contains("$ref cycle"));
  CHECK_THAT(error_of(R"({"$defs": {"a": {"not": {}}}, "type": "array", "items":
                      {"$ref": "#/$defs/a"}})"),
             Contains("unsupported keyword 'not' at /$defs/a"));
}

TEST_CASE("json schema: nesting past the depth limit is an error, not a stack overflow",
          "[grammar]") {
  std::string deep = R"({"type": "integer"})";
  for (int i = 0; i < 70; ++i) deep = R"({"type": "array", "items": )" + deep + "}";
  CHECK_THAT(error_of(deep), Contains("nested more than 64 levels"));
  // A document too deep to copy or print recursively, through either overload.
  const std::string very_deep =
      R"({"const": )" + std::string(100000, '[') + "1" + std::string(100000, ']') + "}";
  CHECK_THROWS_AS(json_schema_to_gbnf(nlohmann::json::parse(very_deep)), grammar_error);
  CHECK_THROWS_AS(json_schema_to_gbnf(nlohmann::ordered_json::parse(very_deep)), grammar_error);
  std::string shallow = R"({"type": "integer"})";
  for (int i = 0; i < 60; ++i) shallow = R"({"type": "array", "items": )" + shallow + "}";
  CHECK_NOTHROW(convert(shallow));
}

TEST_CASE("json schema: a schema with too many subschemas is an error", "[grammar]") {
  nlohmann::ordered_json schema = {{"anyOf", nlohmann::ordered_json::array()}};
  for (int i = 0; i < 100001; ++i) schema["anyOf"].push_back(nlohmann::ordered_json::object());
  CHECK_THROWS_WITH(json_schema_to_gbnf(schema), Contains("more than 100000 subschemas"));
}

TEST_CASE("json schema: max_whitespace outside its range is an error", "[grammar]") {
  json_schema_options o;
  o.max_whitespace = -1;
  CHECK_THROWS_AS(json_schema_to_gbnf(nlohmann::json::object(), o), grammar_error);
  o.max_whitespace = 0;
  CHECK(json_schema_to_gbnf(nlohmann::json::object(), o).find("[ \\t\\n]") == std::string::npos);
}

}  // namespace courier_test_grammar_json_schema_errors
