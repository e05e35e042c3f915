#pragma once
// OpenAI's legacy function calling on chat completions (`functions` and `function_call`, which
// OpenAI still honours), served through tools: the request becomes the tools form on the way
// in, and tool calls become the legacy shape on the way out. Pure JSON: no actors, no I/O.
//
// Request (legacy_functions_to_tools):
// - `functions` [{name, description, parameters}] -> `tools` of type function; `function_call`
//   "none" | "auto" | {"name": N} -> `tool_choice` "none" | "auto" | that function; with
//   `parallel_tool_calls` false (the legacy answer holds one call at most). With `tools` or
//   `tool_choice` as well: a 400 naming the legacy field.
// - history: an assistant message's `function_call` {name, arguments} -> one tool call (id
//   `call_legacy_<i>`, i its message's index); a `function` message {name, content} -> a `tool`
//   message answering the latest such call (none before it: a 400 naming the message).
//
// Response (legacy_functions_response, legacy_functions_chunk): a choice's first tool call is
// `message.function_call` (or, streamed, `delta.function_call` with its name first and its
// arguments in pieces), `tool_calls` removed; finish_reason `tool_calls` -> `function_call`.
#include <nlohmann/json.hpp>

namespace courier::admission {

// Whether a chat body uses the legacy form (a top-level `functions` or `function_call` that is
// not null).
bool uses_legacy_functions(const nlohmann::ordered_json& body);
// The tools form of a legacy chat body (keys in the client's order). Throws api_error 400
// naming the field.
nlohmann::ordered_json legacy_functions_to_tools(const nlohmann::ordered_json& body);
// A whole chat response, and a stream chunk, in the legacy shape (in place).
void legacy_functions_response(nlohmann::json& chat_response);
void legacy_functions_chunk(nlohmann::json& chat_chunk);

}  // namespace courier::admission
