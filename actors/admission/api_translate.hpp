#pragma once
// Small JSON helpers shared by the translators of other APIs onto the chat path
// (`anthropic_messages`, `openai_responses`): strict reads of a client's body that throw
// api_error 400 naming the field, lenient reads of courier's own chat JSON, and the SSE framing
// those APIs use. Internal to those translators: not a public interface.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "actors/admission/api_error.hpp"

namespace courier::admission::translate {

// Client bodies: strict, every problem a 400 naming the field.

// A 400 naming a field: bad_field (api_error.hpp).

// `at.key`, or `key` at the top level (`at` empty).
std::string path(const std::string& at, const char* key);

// The member `key` when present and not null (null is "not given", as on the chat path).
// Borrowed from `obj`.
const nlohmann::ordered_json* given(const nlohmann::ordered_json& obj, const char* key);

// The string member `key`; missing, null or not a string is a 400 naming `at.key`.
const std::string& string_at(const nlohmann::ordered_json& obj, const char* key,
                             const std::string& at);

// An integer >= 1 (signed or unsigned).
bool positive_integer(const nlohmann::ordered_json& v);

// A chat `{"type": "function", "function": {...}}` tool from a client's tool object `t` at
// `at`: its name, description, the schema under `schema_key` (required or optional) and
// `strict`, each checked.
nlohmann::ordered_json chat_function_tool(const nlohmann::ordered_json& t, const std::string& at,
                                          const char* schema_key, bool schema_required);

// A chat `tools` list from a client's `tools`: a list of objects (else a 400 naming the entry),
// each entry's chat tool as `tool(t, at)` makes it (at: "tools[i]").
using tool_translator =
    std::function<nlohmann::ordered_json(const nlohmann::ordered_json&, const std::string&)>;
nlohmann::ordered_json chat_tools_of(const nlohmann::ordered_json& tools,
                                     const tool_translator& tool);

// Courier's own chat JSON: lenient, a missing or mistyped member is empty.

const std::string& str(const nlohmann::json& obj, const char* key);
std::int64_t count(const nlohmann::json& obj, const char* key);
// The member, or null; borrowed from `obj` (or a static null).
const nlohmann::json& member(const nlohmann::json& obj, const char* key);
// choices[0], or null.
const nlohmann::json& first_choice(const nlohmann::json& chat);

// "chatcmpl-X" -> "X": what follows the prefix naming the object type.
std::string id_suffix(const std::string& id);

// A typed SSE event: "event: <data.type>\ndata: <data>\n\n" (invalid UTF-8 replaced).
std::string sse_event(const nlohmann::ordered_json& data);

}  // namespace courier::admission::translate
