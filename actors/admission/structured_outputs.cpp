#include "actors/admission/structured_outputs.hpp"

#include <fmt/format.h>

#include <vector>

#include "actors/admission/json_body.hpp"
#include "grammar/grammar_error.hpp"

namespace courier::admission {

using nlohmann::ordered_json;

namespace {

// A schema given as an object, or (vLLM accepts both) as a string of JSON.
grammar_spec schema_spec(const ordered_json& v, const std::string& field, bool strict,
                         int max_depth) {
  grammar_spec s;
  s.k = grammar_spec::kind::json_schema;
  s.strict = strict;
  if (v.is_object() || v.is_boolean()) {
    s.source = v.dump();
  } else if (v.is_string()) {
    const auto parsed = parse_json_in_string(v.get<std::string>(), max_depth, field);
    if (!parsed || !(parsed->is_object() || parsed->is_boolean())) {
      throw bad_field(field, "expected a JSON Schema (an object, or a string holding one)");
    }
    s.source = parsed->dump();
  } else {
    throw bad_field(field, "expected a JSON Schema object");
  }
  return s;
}

grammar_spec text_spec(const ordered_json& v, const std::string& field, grammar_spec::kind k) {
  if (!v.is_string() || v.get<std::string>().empty())
    throw bad_field(field, "expected a non-empty string");
  return {k, v.get<std::string>(), false};
}

grammar_spec choice_spec(const ordered_json& v, const std::string& field) {
  if (!v.is_array() || v.empty()) throw bad_field(field, "expected a non-empty list of strings");
  for (const auto& c : v) {
    if (!c.is_string()) throw bad_field(field, "expected a non-empty list of strings");
  }
  return {grammar_spec::kind::choice, v.dump(), false};
}

std::optional<structured_output> from_response_format(const ordered_json& rf, int max_depth) {
  if (!rf.is_object() || !rf.contains("type") || !rf["type"].is_string()) {
    throw bad_field("response_format", "expected an object with a string 'type'");
  }
  const std::string type = rf["type"].get<std::string>();
  if (type == "text") return std::nullopt;
  if (type == "json_object") {
    return structured_output{{grammar_spec::kind::json_object, "", false}, "response_format"};
  }
  if (type != "json_schema") {
    throw bad_field("response_format.type",
              fmt::format("'{}' is not supported; use text, json_object or json_schema", type));
  }
  if (!rf.contains("json_schema") || !rf["json_schema"].is_object()) {
    throw bad_field("response_format.json_schema", "is required with type json_schema (an object)");
  }
  const ordered_json& js = rf["json_schema"];
  if (js.contains("name") && !js["name"].is_null() && !js["name"].is_string()) {
    throw bad_field("response_format.json_schema.name", "expected a string");
  }
  bool strict = false;
  if (js.contains("strict") && !js["strict"].is_null()) {
    if (!js["strict"].is_boolean())
      throw bad_field("response_format.json_schema.strict", "expected true or false");
    strict = js["strict"].get<bool>();
  }
  const std::string field = "response_format.json_schema.schema";
  if (!js.contains("schema") || js["schema"].is_null()) throw bad_field(field, "is required");
  return structured_output{schema_spec(js["schema"], field, strict, max_depth), field};
}

// vLLM's structured_outputs object: exactly one of its grammar members.
std::optional<structured_output> from_vllm_object(const ordered_json& so, int max_depth) {
  if (!so.is_object()) throw bad_field("structured_outputs", "expected an object");
  std::vector<structured_output> found;
  for (const auto& [key, v] : so.items()) {
    if (v.is_null()) continue;
    const std::string field = "structured_outputs." + key;
    if (key == "json") {
      found.push_back({schema_spec(v, field, false, max_depth), field});
    } else if (key == "regex") {
      found.push_back({text_spec(v, field, grammar_spec::kind::regex), field});
    } else if (key == "grammar") {
      found.push_back({text_spec(v, field, grammar_spec::kind::gbnf), field});
    } else if (key == "choice") {
      found.push_back({choice_spec(v, field), field});
    } else if (key == "json_object") {
      if (!v.is_boolean()) throw bad_field(field, "expected true or false");
      if (v.get<bool>()) found.push_back({{grammar_spec::kind::json_object, "", false}, field});
    } else if (key == "structural_tag") {
      throw bad_field(field, "is not supported");
    }
    // Backend and whitespace options: courier has one backend and its own whitespace rule.
  }
  if (found.size() > 1) {
    throw bad_field("structured_outputs", fmt::format("give one of json, regex, choice, grammar, "
                                                "json_object; got {} and {}",
                                                found[0].field, found[1].field));
  }
  if (found.empty()) return std::nullopt;
  return found.front();
}

}  // namespace

bool is_structured_output_field(const std::string& key) {
  return key == "response_format" || key == "structured_outputs" || key == "guided_json" ||
         key == "guided_regex" || key == "guided_choice" || key == "guided_grammar" ||
         key == "grammar" || key == "json_schema";
}

std::optional<structured_output> find_structured_output(const ordered_json& body,
                                                        int max_depth) {
  std::vector<structured_output> found;
  for (const auto& [key, v] : body.items()) {
    if (v.is_null()) continue;
    std::optional<structured_output> one;
    if (key == "response_format") {
      one = from_response_format(v, max_depth);
    } else if (key == "structured_outputs") {
      one = from_vllm_object(v, max_depth);
    } else if (key == "guided_json" || key == "json_schema") {
      one = structured_output{schema_spec(v, key, false, max_depth), key};
    } else if (key == "guided_regex") {
      one = structured_output{text_spec(v, key, grammar_spec::kind::regex), key};
    } else if (key == "guided_grammar" || key == "grammar") {
      one = structured_output{text_spec(v, key, grammar_spec::kind::gbnf), key};
    } else if (key == "guided_choice") {
      one = structured_output{choice_spec(v, key), key};
    }
    if (one) found.push_back(std::move(*one));
  }
  if (found.size() > 1) {
    throw bad_field(found[1].field,
                    fmt::format("the output is already constrained by '{}': give one "
                                "structured-output field",
                                found[0].field));
  }
  if (found.empty()) return std::nullopt;
  return found.front();
}

msg::output_grammar compile_structured_output(const structured_output& out,
                                              grammar_registry* registry,
                                              const std::string& scope) {
  if (!registry) {
    throw bad_field(out.field,
                    "structured outputs need the model's tokenizer, which this server has not");
  }
  try {
    return registry->get(out.spec, scope);
  } catch (const grammar::grammar_error& e) {
    const char* key = e.limit == "time"       ? "server.grammar_compile_ms"
                      : e.limit == "memory"   ? "server.grammar_compile_mb"
                      : e.limit == "work"     ? "server.grammar_compile_work"
                      : e.limit == "branches" ? "server.grammar_max_branches"
                                              : nullptr;
    throw bad_field(out.field, key ? fmt::format("{} ({})", e.what(), key) : e.what());
  }
}

}  // namespace courier::admission
