#pragma once
// Request bodies, and JSON texts held in a string of one (a schema given as a string, tool-call
// arguments), are parsed here, and only here, through base/json_text.hpp: the nesting depth is
// checked on the raw bytes first, without recursion, so that no recursive walk of the parsed
// value (a copy, a dump, the chat template's tojson, a schema's compiler) can overflow the
// stack on hostile input (`[[[[...]]]]` 100k deep, or the same inside a string).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/json_text.hpp"

namespace courier::admission {

using base::json_nesting_depth;

// Parses a request body. Throws api_error 400 when the body nests deeper than `max_depth`
// (naming the limit and server.max_json_depth), is not valid JSON, or is not an object.
nlohmann::json parse_json_body(std::string_view body, int max_depth);
// The same with the object's keys in the body's order (what chat templates see).
nlohmann::ordered_json parse_ordered_json_body(std::string_view body, int max_depth);

// JSON held in a string field of a request (`field` names it). Throws api_error 400 naming the
// field and server.max_json_depth when the text nests deeper than `max_depth`; nullopt when it is
// not valid JSON (each caller decides what a malformed text means there).
std::optional<nlohmann::ordered_json> parse_json_in_string(std::string_view text, int max_depth,
                                                           const std::string& field);

}  // namespace courier::admission
