#pragma once
// The request fields that hold the output to a grammar, as each API family names them:
// OpenAI's `response_format` (text, json_object, json_schema), vLLM's `structured_outputs`
// (json, regex, choice, grammar, json_object) and its older `guided_json`/`guided_regex`/
// `guided_choice`/`guided_grammar`, and llama.cpp's `grammar` (GBNF) and `json_schema`. At most
// one may be given. Each becomes a grammar_spec; a problem is an api_error naming the field.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "actors/admission/api_error.hpp"
#include "actors/admission/grammar_registry.hpp"

namespace courier::admission {

struct structured_output {
  grammar_spec spec;
  std::string field;  // where it came from, for errors ("response_format.json_schema.schema")
};

// The body's structured-output field, if any. `ordered` is the body in its own key order (a
// schema's properties are generated in the order the client wrote them); a schema given as a
// string may nest at most `max_depth` levels (server.max_json_depth). Throws api_error.
std::optional<structured_output> find_structured_output(const nlohmann::ordered_json& ordered,
                                                        int max_depth);

// Top-level fields find_structured_output reads (so they are not reported as ignored).
bool is_structured_output_field(const std::string& key);

// Compiles (or finds, in `scope`: grammar_registry::get) the grammar; a grammar_error becomes a
// 400 naming `out.field`.
msg::output_grammar compile_structured_output(const structured_output& out,
                                              grammar_registry* registry,
                                              const std::string& scope);

}  // namespace courier::admission
