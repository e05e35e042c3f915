#pragma once
// JSON Schema to GBNF: the output a `response_format` json_schema, a tool's `parameters` or
// `json_object` allows, as a grammar of JSON text.
//
// Supported (draft 2020-12 and what OpenAI's strict mode accepts, plus what clients send):
// `type` (a name or an array of names: object, array, string, number, integer, boolean, null),
// `properties`, `required`, `additionalProperties` (false, true, or a schema), `enum`, `const`,
// `anyOf`, `oneOf` (as anyOf), `allOf` of one schema, `items`, `prefixItems`, `minItems`,
// `maxItems`, `minLength`, `maxLength`, `pattern`, `format` (date-time, date, time, uuid, email),
// `minimum`/`maximum`/`exclusiveMinimum`/`exclusiveMaximum` for integers (and as far as a grammar
// can for numbers), `$ref` to `#/$defs/...` and `#/definitions/...` and `#` (recursion allowed),
// `nullable` (OpenAPI). Annotations are ignored: `title`, `description`, `default`, `examples`,
// `$schema`, `$id`, `$comment`, `deprecated`, `readOnly`, `writeOnly`, `strict`.
// Anything else is a grammar_error naming the keyword and where it is (a JSON pointer), never a
// silent ignore.
//
// The JSON text the grammar allows: properties in the schema's order (required ones always,
// optional ones each optionally), whitespace as json_schema_options says, strings with JSON's
// escapes, numbers in JSON's syntax.
//
// Ways of writing a valid value the grammar does not allow: whitespace before or after the
// root value; a leap second (:60); extra members (additionalProperties) before declared ones; `enum`/`const` values
// other than as nlohmann's compact dump; an integer with a fraction or exponent ("1.0"), or
// "-0" when bounded; a bounded number with an exponent; in a `pattern` string, escapes other
// than the short ones and \u00xx for control characters. Values it does not allow: an `email`
// other than a dot-atom, `@` and two or more DNS labels; in a schema without `type`, a value
// of a type none of its keywords constrains (`{"minLength": 1}` allows strings only, where
// JSON Schema would allow any number too). Values it allows beyond the schema:
// `oneOf` as `anyOf`; an extra member's key that spells a declared
// name with an optional escape, or any key past about 1500 bytes of declared names; an extra
// key twice. Errors rather than guesses: bounds of a `number` that are not whole (an `integer`'s
// bounds may have a fraction: `minimum: 1.5` is exactly `minimum: 2`, so they are rounded toward
// the allowed side), any bound beyond 1e20, `pattern` or `format` beside minLength/maxLength,
// and constraints beside `enum`, `$ref` or `anyOf` (the converter does not intersect them).
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "grammar/compile_limits.hpp"

namespace courier::grammar {

struct json_schema_options {
  // Whitespace allowed between tokens: none (compact), or one space or one line break followed
  // by at most max_whitespace spaces and tabs (compact and pretty-printed JSON both fit; a
  // model cannot fill its output with blank lines).
  bool compact = false;
  int max_whitespace = 20;
  // additionalProperties when a schema does not say (JSON Schema's default is true; OpenAI's
  // strict mode makes it false).
  bool default_additional_properties = true;
};

// GBNF whose `root` is exactly the JSON texts valid under `schema`. A grammar_error when the
// schema is refused, or when converting it runs out of the limits or the budget (pass the
// budget on to compile_gbnf so that the limits hold for the whole compilation).
std::string json_schema_to_gbnf(const nlohmann::json& schema, const json_schema_options& opts = {},
                                const compile_limits& limits = {});
std::string json_schema_to_gbnf(const nlohmann::json& schema, const json_schema_options& opts,
                                compile_budget& budget);
// The same for a schema parsed in order: nlohmann::json sorts an object's keys, so through the
// overloads above properties come in alphabetical order; through these, in the schema's order
// (what OpenAI's structured outputs do, and what a client writing "reasoning" before "answer"
// means).
std::string json_schema_to_gbnf(const nlohmann::ordered_json& schema,
                                const json_schema_options& opts = {},
                                const compile_limits& limits = {});
std::string json_schema_to_gbnf(const nlohmann::ordered_json& schema,
                                const json_schema_options& opts, compile_budget& budget);

// GBNF for any JSON object (response_format json_object).
std::string json_object_gbnf(const json_schema_options& opts = {});

}  // namespace courier::grammar
