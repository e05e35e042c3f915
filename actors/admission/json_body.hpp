#pragma once
// Request bodies are parsed here, and only here: the nesting depth is checked on the raw bytes
// first, without recursion, so that no recursive walk of the parsed value (a copy, a dump, the
// chat template's tojson) can overflow the stack on hostile input (`[[[[...]]]]` 100k deep).
#include <nlohmann/json.hpp>
#include <string_view>

namespace courier::admission {

// The deepest nesting of arrays and objects in `text`, counting only brackets outside strings;
// stops counting once past `limit` and returns limit + 1. Malformed JSON is counted all the same
// (the parser rejects it afterwards).
int json_nesting_depth(std::string_view text, int limit);

// Parses a request body. Throws api_error 400 when the body nests deeper than `max_depth`
// (naming the limit and server.max_json_depth), is not valid JSON, or is not an object.
nlohmann::json parse_json_body(std::string_view body, int max_depth);
// The same with the object's keys in the body's order (what chat templates see).
nlohmann::ordered_json parse_ordered_json_body(std::string_view body, int max_depth);

}  // namespace courier::admission
