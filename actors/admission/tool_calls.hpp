#pragma once
// A chat request's tools: the functions offered (`tools`), what the model must do with them
// (`tool_choice`: none, auto, required, or one named function; `parallel_tool_calls`), and the
// grammar that holds the output to valid calls when it is forced (required or named). The calls
// are written in the model family's own syntax, so the same parser reads forced and free calls:
//
//   hermes       <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>   (one per call,
//                separated by "\n")
//   llama3_json  {"name": "f", "parameters": {...}}                              (joined by "; ")
//   mistral      [TOOL_CALLS][{"name": "f", "arguments": {...}}, ...]
//
// Each function's arguments are held to its `parameters` JSON Schema (its refs resolve inside
// it); a forced named function allows exactly one call of it. With tool_choice auto the output
// is free until the model writes the family's start marker, and the grammar then holds the call
// (a triggered grammar: msg::output_grammar::trigger).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "actors/admission/grammar_registry.hpp"
#include "text/output_parsers/tool_call_parser.hpp"

namespace courier::admission {

enum class tool_choice_mode : std::uint8_t { none, automatic, required, named };

struct tool_request {
  std::vector<std::string> names;                    // in the request's order
  std::vector<nlohmann::ordered_json> parameters;    // each function's schema ({} if absent)
  tool_choice_mode mode = tool_choice_mode::none;    // automatic when tools are given
  std::string named;                                 // mode == named: the function
  bool parallel = true;                              // parallel_tool_calls
};

// `tools`, `tool_choice` and `parallel_tool_calls` of a chat body; throws api_error naming the
// field (a tool without a name, a named choice no tool has, required without tools).
tool_request parse_tool_request(const nlohmann::ordered_json& body);

// The grammar of forced calls (mode required or named) in `family`'s syntax; `triggered`: the
// grammar of what follows the family's start marker (trigger_of), for tool_choice auto.
grammar_spec tool_call_spec(const tool_request& tools, text::parsers::tool_family family,
                            bool triggered = false);

// The start marker of a call in the family's syntax, after which a triggered grammar holds the
// output; empty when the family has none (Llama 3's calls are bare JSON).
std::string trigger_of(text::parsers::tool_family family);

// GBNF of a spec of kind tool_calls (grammar_registry's gbnf_of), charging `budget`.
std::string tool_call_gbnf(const std::string& source, grammar::compile_budget& budget);

}  // namespace courier::admission
