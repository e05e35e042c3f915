#include "actors/admission/tool_calls.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "actors/admission/api_error.hpp"
#include "base/json_text.hpp"
#include "grammar/gbnf.hpp"
#include "grammar/grammar_error.hpp"
#include "grammar/json_schema.hpp"

namespace courier::admission {

using nlohmann::ordered_json;

namespace {

bool valid_name(const std::string& n) {
  if (n.empty() || n.size() > 64) return false;
  for (char c : n) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) {
      return false;
    }
  }
  return true;
}

void parse_tools(const ordered_json& tools, tool_request& r) {
  if (!tools.is_array()) throw bad_field("tools", "expected a list of tools");
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const std::string at = fmt::format("tools[{}]", i);
    const ordered_json& t = tools[i];
    if (!t.is_object()) throw bad_field(at, "expected an object");
    const std::string type = t.contains("type") && t["type"].is_string() ? t["type"].get<std::string>() : "";
    if (type != "function") throw bad_field(at + ".type", "only \"function\" tools are supported");
    if (!t.contains("function") || !t["function"].is_object()) {
      throw bad_field(at + ".function", "is required (an object)");
    }
    const ordered_json& f = t["function"];
    if (!f.contains("name") || !f["name"].is_string() || !valid_name(f["name"].get<std::string>())) {
      throw bad_field(at + ".function.name", "must be 1 to 64 letters, digits, '_', '-' or '.'");
    }
    const std::string name = f["name"].get<std::string>();
    for (const std::string& seen : r.names) {
      if (seen == name)
        throw bad_field(at + ".function.name", fmt::format("'{}' is given twice", name));
    }
    ordered_json params = {{"type", "object"}, {"properties", ordered_json::object()},
                           {"additionalProperties", false}};  // no parameters: "{}" only
    if (f.contains("parameters") && !f["parameters"].is_null()) {
      if (!f["parameters"].is_object())
        throw bad_field(at + ".function.parameters", "expected a JSON Schema object");
      params = f["parameters"];
    }
    if (f.contains("strict") && f["strict"].is_boolean() && f["strict"].get<bool>()) {
      params["$courier_strict"] = true;  // read (and removed) by tool_call_gbnf
    }
    r.names.push_back(name);
    r.parameters.push_back(std::move(params));
  }
}

void parse_choice(const ordered_json& c, tool_request& r) {
  if (c.is_string()) {
    const std::string s = c.get<std::string>();
    if (s == "none") {
      r.mode = tool_choice_mode::none;
    } else if (s == "auto") {
      r.mode = r.names.empty() ? tool_choice_mode::none : tool_choice_mode::automatic;
    } else if (s == "required") {
      r.mode = tool_choice_mode::required;
    } else {
      throw bad_field("tool_choice", fmt::format("'{}' is not one of none, auto, required", s));
    }
  } else if (c.is_object()) {
    const ordered_json* f = c.contains("function") ? &c["function"] : nullptr;
    if (c.value("type", "") != "function" || !f || !f->is_object() || !f->contains("name") ||
        !(*f)["name"].is_string()) {
      throw bad_field("tool_choice",
                      "expected {\"type\": \"function\", \"function\": {\"name\": ...}}");
    }
    r.mode = tool_choice_mode::named;
    r.named = (*f)["name"].get<std::string>();
    if (std::find(r.names.begin(), r.names.end(), r.named) == r.names.end()) {
      throw bad_field("tool_choice", fmt::format("no tool is named '{}'", r.named));
    }
  } else {
    throw bad_field("tool_choice", "expected none, auto, required or a function");
  }
  if (r.mode == tool_choice_mode::required && r.names.empty()) {
    throw bad_field("tool_choice", "'required' needs tools");
  }
}

// Every rule name of a function's grammar gets `prefix`, so that several fit in one grammar.
void prefix_refs(grammar::expr& e, const std::string& prefix) {
  if (e.k == grammar::expr::kind::rule_ref) e.text = prefix + e.text;
  for (grammar::expr& c : e.children) prefix_refs(c, prefix);
}

struct family_syntax {
  const char* name_key;  // the key of the arguments object
  const char* open;      // before the first call
  const char* before;    // before each call object
  const char* after;     // after each call object
  const char* between;   // between calls
  const char* close;     // after the last call
};

// The syntax of forced calls; `triggered`: what follows the family's start marker (the
// trigger_of) in a triggered grammar.
family_syntax syntax_of(const std::string& family, bool triggered) {
  if (family == "llama3_json") return {"parameters", "", "", "", "; ", ""};
  if (family == "mistral") {
    return {"arguments", triggered ? "[" : "[TOOL_CALLS][", "", "", ", ", "]"};
  }
  return {"arguments", "", triggered ? "\n" : "<tool_call>\n", "\n</tool_call>", "\n", ""};
}

const char* family_name(text::parsers::tool_family f) {
  switch (f) {
    case text::parsers::tool_family::hermes: return "hermes";
    case text::parsers::tool_family::llama3_json: return "llama3_json";
    case text::parsers::tool_family::mistral: return "mistral";
  }
  return "hermes";
}

}  // namespace

tool_request parse_tool_request(const ordered_json& body) {
  tool_request r;
  if (body.contains("tools")) parse_tools(body["tools"], r);
  r.mode = r.names.empty() ? tool_choice_mode::none : tool_choice_mode::automatic;
  if (body.contains("tool_choice")) parse_choice(body["tool_choice"], r);
  if (body.contains("parallel_tool_calls")) {
    if (!body["parallel_tool_calls"].is_boolean()) {
      throw bad_field("parallel_tool_calls", "expected true or false");
    }
    r.parallel = body["parallel_tool_calls"].get<bool>();
  }
  return r;
}

std::string trigger_of(text::parsers::tool_family family) {
  switch (family) {
    case text::parsers::tool_family::hermes: return "<tool_call>";
    case text::parsers::tool_family::mistral: return "[TOOL_CALLS]";
    case text::parsers::tool_family::llama3_json: return "";
  }
  return "";
}

grammar_spec tool_call_spec(const tool_request& tools, text::parsers::tool_family family,
                            bool triggered) {
  ordered_json functions = ordered_json::array();
  for (std::size_t i = 0; i < tools.names.size(); ++i) {
    if (tools.mode == tool_choice_mode::named && tools.names[i] != tools.named) continue;
    functions.push_back({{"name", tools.names[i]}, {"parameters", tools.parameters[i]}});
  }
  // A triggered Hermes grammar is one call: each call has its own <tool_call>.
  const bool parallel = tools.parallel && tools.mode != tool_choice_mode::named &&
                        !(triggered && family == text::parsers::tool_family::hermes);
  const ordered_json source = {{"family", family_name(family)},
                               {"parallel", parallel},
                               {"triggered", triggered},
                               {"functions", functions}};
  return {grammar_spec::kind::tool_calls, source.dump(), false};
}

std::string tool_call_gbnf(const std::string& source, grammar::compile_budget& budget) {
  const auto parsed = base::try_parse_json_text<ordered_json>(source, max_source_depth);
  if (!parsed) throw grammar::grammar_error("the tool calls' grammar source is not valid JSON");
  const ordered_json& s = *parsed;
  const family_syntax syn = syntax_of(s.at("family").get<std::string>(), s.value("triggered", false));
  std::string out;
  std::vector<grammar::expr> calls;
  const ordered_json& functions = s.at("functions");
  for (std::size_t i = 0; i < functions.size(); ++i) {
    const std::string name = functions[i].at("name").get<std::string>();
    ordered_json params = functions[i].at("parameters");
    grammar::json_schema_options opts;
    if (params.is_object() && params.contains("$courier_strict")) {
      params.erase("$courier_strict");
      opts.default_additional_properties = false;
    }
    const std::string prefix = fmt::format("f{}-", i);
    std::string args;
    try {
      args = grammar::json_schema_to_gbnf(params, opts, budget);
    } catch (const grammar::grammar_error& e) {
      throw grammar::grammar_error(fmt::format("tool '{}': {}", name, e.what()), e.limit);
    }
    for (grammar::gbnf_rule& rule : grammar::parse_gbnf(args, budget)) {
      prefix_refs(rule.body, prefix);
      out += fmt::format("{}{} ::= {}\n", prefix, rule.name, grammar::to_gbnf(rule.body));
    }
    calls.push_back(grammar::expr::make_sequence(
        {grammar::expr::make_literal(fmt::format("{}{{\"name\": {}, \"{}\": ", syn.before,
                                                 nlohmann::json(name).dump(), syn.name_key)),
         grammar::expr::make_ref(prefix + "root"),
         grammar::expr::make_literal(std::string("}") + syn.after)}));
  }
  if (calls.empty()) throw grammar::grammar_error("no tool to call");
  const std::string call = grammar::to_gbnf(grammar::expr::make_alternation(std::move(calls)));
  std::string root = "call";
  if (s.at("parallel").get<bool>()) {
    root += " (" + grammar::to_gbnf(grammar::expr::make_literal(syn.between)) + " call)*";
  }
  auto lit = [](const char* t) {
    return *t ? grammar::to_gbnf(grammar::expr::make_literal(t)) + " " : std::string();
  };
  std::string close = *syn.close ? " " + grammar::to_gbnf(grammar::expr::make_literal(syn.close)) : "";
  return fmt::format("root ::= {}{}{}\ncall ::= {}\n{}", lit(syn.open), root, close, call, out);
}

}  // namespace courier::admission
