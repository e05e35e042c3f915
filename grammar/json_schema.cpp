// JSON Schema to GBNF: the entry points, and the converter's dispatch over keywords, `$ref`,
// `enum`/`const` and `anyOf`/`oneOf`/`allOf`. Objects and arrays are in json_schema_objects.cpp,
// strings in json_schema_strings.cpp, numbers in json_schema_numbers.cpp.
#include "grammar/json_schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "grammar/expr.hpp"
#include "grammar/grammar_error.hpp"
#include "grammar/json_schema_internal.hpp"

namespace courier::grammar {

namespace json_schema_detail {

namespace {

// "%24defs" -> "$defs": a `$ref` is a URI fragment, so its pointer may be percent-encoded.
std::string percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

converter::converter(const json& root, const json_schema_options& opts, compile_budget& budget)
    : root_(root), opts_(opts), budget_(budget) {
  if (opts.max_whitespace < 0 ||
      static_cast<std::uint64_t>(opts.max_whitespace) > max_repeat_bound) {
    throw grammar_error(fmt::format("json schema: max_whitespace {} is outside [0, {}]",
                                    opts.max_whitespace, max_repeat_bound));
  }
  // One space, or a line break and an indentation: what compact and pretty-printed JSON use,
  // and never a run of blank lines (a model that starts one may never stop: llama.cpp's rule).
  if (!opts.compact) {
    ws_ = "(\" \" | \"\\n\" " + gbnf_repeat("[ \\t]", 0, opts.max_whitespace) + ")?";
  }
  sep_ = gbnf_sequence({ws_, "\",\"", ws_});
  for (const char* name :
       {"root", "value", "object", "array", "string", "char", "number", "integer",
        "format-date-time", "format-date", "format-time", "format-uuid", "format-email"}) {
    names_.insert(name);
  }
}

std::string converter::convert() {
  ref_rules_[""] = "root";
  location at;
  at.hint = at.own_name = at.head_owner = "root";
  visit(root_, at);
  convert_pending_refs();
  check_head_cycles();
  return render();
}

std::string converter::convert_any_object() {
  define_rule("root", builtin("object"));
  return render();
}

std::string converter::render() const {
  std::string out;
  for (const bool root_pass : {true, false}) {
    for (const auto& [name, body] : rules_) {
      if ((name == "root") == root_pass) out += fmt::format("{} ::= {}\n", name, body);
    }
  }
  return out;
}

std::string converter::visit(const json& schema, const location& at) {
  if (at.depth > max_schema_depth) {
    fail(at, fmt::format("schemas nested more than {} levels deep", max_schema_depth));
  }
  if (++num_visits_ > max_schema_visits) {
    fail(at, fmt::format("more than {} subschemas to convert", max_schema_visits));
  }
  budget_.charge_work(16);
  if (schema.is_boolean()) {
    if (!schema.get<bool>()) fail(at, "the schema false allows no value");
    return finish(at, builtin("value"), false);
  }
  if (!schema.is_object()) fail(at, "a schema must be an object or a boolean");
  check_keywords(schema, at);
  const auto nullable = schema.find("nullable");
  if (nullable != schema.end() && nullable->get<bool>()) {
    location inner = at;
    inner.own_name.clear();
    const std::string e = visit_core(schema, inner);
    return finish(at, join_alternatives({e, "\"null\""}), false);
  }
  return visit_core(schema, at);
}

std::string converter::visit_core(const json& schema, const location& at) {
  if (schema.contains("$ref")) return visit_ref(schema, at);
  if (schema.contains("anyOf") || schema.contains("oneOf") || schema.contains("allOf")) {
    return visit_alternatives(schema, at);
  }
  const unsigned types = declared_types(schema, at);
  if (schema.contains("enum") || schema.contains("const")) return visit_enum(schema, at, types);
  // No type and no keyword of one: any value, whatever default_additional_properties says.
  if (!schema.contains("type") && types == (type_any & ~unsigned{type_integer})) {
    return finish(at, builtin("value"), false);
  }
  std::vector<unsigned> each;
  for (const auto& [name, bit] : type_names) {
    if (types & bit) each.push_back(bit);
  }
  if (each.size() == 1) return visit_type(schema, at, each[0]);
  std::vector<std::string> alts;
  for (const unsigned t : each) {
    location one = at;
    one.own_name.clear();
    for (const auto& [name, bit] : type_names) {
      if (bit == t) one.hint = fmt::format("{}-{}", at.hint, name);
    }
    alts.push_back(visit_type(schema, one, t));
  }
  return finish(at, join_alternatives(alts), false);
}

std::string converter::visit_type(const json& schema, const location& at, unsigned type) {
  switch (type) {
    case type_null:
      return finish(at, "\"null\"", false);
    case type_boolean:
      return finish(at, "\"true\" | \"false\"", false);
    case type_object:
      return visit_object(schema, at);
    case type_array:
      return visit_array(schema, at);
    case type_string:
      return visit_string(schema, at);
    case type_number:
      return visit_number(schema, at, false);
    default:
      return visit_number(schema, at, true);
  }
}

std::string converter::visit_ref(const json& schema, const location& at) {
  check_only_annotations_beside(schema, at, "$ref");
  const std::string& ref = schema.at("$ref").get_ref<const std::string&>();
  if (ref != "#" && ref.rfind("#/", 0) != 0) {
    fail(at, fmt::format("$ref '{}' is unsupported (only '#' and '#/...' within the schema)", ref));
  }
  std::string key;
  try {
    const json::json_pointer pointer(percent_decode(std::string_view(ref).substr(1)));
    if (!root_.contains(pointer)) fail(at, fmt::format("$ref '{}' points to nothing", ref));
    key = pointer.to_string();
  } catch (const nlohmann::json::exception&) {
    fail(at, fmt::format("$ref '{}' is not a valid JSON pointer", ref));
  }
  auto it = ref_rules_.find(key);
  if (it == ref_rules_.end()) {
    const std::string stem = key.substr(key.rfind('/') + 1);
    const std::string name = reserve_name(stem);
    it = ref_rules_.emplace(key, name).first;
    pending_refs_.emplace_back(key, name);
  }
  if (!at.head_owner.empty()) head_refs_[at.head_owner].insert(it->second);
  return finish(at, it->second, false);
}

void converter::convert_pending_refs() {
  // Index, not iterator: converting one target may queue more.
  for (std::size_t i = 0; i < pending_refs_.size(); ++i) {
    const auto [key, name] = pending_refs_[i];
    location at;
    at.pointer = key;
    at.hint = at.own_name = at.head_owner = name;
    visit(root_.at(json::json_pointer(key)), at);
  }
}

void converter::check_head_cycles() const {
  // Rules that reach a cycle of rules each starting with the next (a schema that is only a
  // reference to itself): remove the rules none of whose first rules remain, as long as there
  // are any (Kahn's algorithm, backwards); what remains is on or before such a cycle.
  std::map<std::string, std::size_t> num_firsts;
  std::map<std::string, std::vector<std::string>> starts_of;  // rule -> rules starting with it
  std::set<std::string> ends;                                 // first rules that start with no rule
  for (const auto& [rule, firsts] : head_refs_) {
    num_firsts[rule] = firsts.size();
    for (const std::string& f : firsts) {
      starts_of[f].push_back(rule);
      if (head_refs_.count(f) == 0) ends.insert(f);
    }
  }
  std::vector<std::string> done(ends.begin(), ends.end());
  while (!done.empty()) {
    const std::string rule = done.back();
    done.pop_back();
    for (const std::string& s : starts_of[rule]) {
      if (--num_firsts[s] == 0) done.push_back(s);
    }
  }
  for (const auto& [rule, n] : num_firsts) {
    if (n == 0) continue;
    for (const auto& [key, name] : ref_rules_) {
      if (name != rule) continue;
      location at;
      at.pointer = key;
      fail(at, "$ref cycle: the schema refers to itself before any JSON token");
    }
  }
}

std::string converter::visit_alternatives(const json& schema, const location& at) {
  const char* keyword = schema.contains("anyOf")   ? "anyOf"
                        : schema.contains("oneOf") ? "oneOf"
                                                   : "allOf";
  check_only_annotations_beside(schema, at, keyword);
  const json& branches = schema.at(keyword);
  if (std::string_view(keyword) == "allOf") {
    if (branches.size() != 1) fail(at, "'allOf' with more than one schema is unsupported");
    location one = child(at, keyword, "0", at.hint);
    one.own_name = at.own_name;
    one.head_owner = at.head_owner;
    return visit(branches[0], one);
  }
  std::vector<std::string> alts;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < branches.size(); ++i) {
    if (branches[i] == json(false)) continue;  // allows nothing: not an alternative
    location branch = child(at, keyword, std::to_string(i), fmt::format("{}-{}", at.hint, i));
    branch.head_owner = at.head_owner;
    std::string e = visit(branches[i], branch);
    if (seen.insert(e).second) alts.push_back(std::move(e));
  }
  if (alts.empty()) fail(at, fmt::format("every schema of '{}' is false", keyword));
  // oneOf is taken as anyOf: telling "exactly one" from "at least one" needs the complement.
  return finish(at, join_alternatives(alts), false);
}

std::string converter::visit_enum(const json& schema, const location& at, unsigned types) {
  const char* keyword = schema.contains("enum") ? "enum" : "const";
  for (const auto& [key, value] : schema.items()) {
    const auto k = keyword_types().find(key);
    if (k != keyword_types().end() && k->second != 0) {
      fail(at, fmt::format("keyword '{}' beside '{}' is unsupported", key, keyword));
    }
  }
  json values = schema.contains("enum") ? schema.at("enum") : json::array({schema.at("const")});
  if (schema.contains("enum") && schema.contains("const")) {
    values = json::array();
    for (const json& v : schema.at("enum")) {
      if (v == schema.at("const")) values.push_back(v);
    }
  }
  std::vector<std::string> alts;
  std::set<std::string> seen;
  for (const json& v : values) {
    if (!has_type(v, types)) continue;
    std::string literal = gbnf_quote(v.dump());
    budget_.charge_work(literal.size() / 16 + 1);
    budget_.charge_memory(2 * literal.size() + 64);
    if (seen.insert(literal).second) alts.push_back(std::move(literal));
  }
  if (alts.empty()) fail(at, fmt::format("'{}' allows no value of the schema's type", keyword));
  return finish(at, join_alternatives(alts), false);
}

}  // namespace json_schema_detail

namespace {

// The deepest JSON document converted: a deeper one cannot be a schema within
// max_schema_depth, and copying or printing it (nlohmann recurses) could exhaust the stack.
constexpr std::size_t max_document_depth = 512;

template <typename document_type>
void check_document_depth(const document_type& document) {
  std::vector<std::pair<const document_type*, std::size_t>> todo = {{&document, 0}};
  while (!todo.empty()) {
    const auto [node, depth] = todo.back();
    todo.pop_back();
    if (depth > max_document_depth) {
      throw grammar_error(
          fmt::format("json schema: nested more than {} levels deep", max_document_depth));
    }
    if (!node->is_structured()) continue;
    for (const document_type& v : *node) todo.emplace_back(&v, depth + 1);
  }
}

}  // namespace

std::string json_schema_to_gbnf(const nlohmann::ordered_json& schema,
                                const json_schema_options& opts, compile_budget& budget) {
  check_document_depth(schema);
  try {
    json_schema_detail::converter c(schema, opts, budget);
    return c.convert();
  } catch (const nlohmann::json::exception& e) {
    throw grammar_error(fmt::format("json schema: {}", e.what()));
  }
}

std::string json_schema_to_gbnf(const nlohmann::ordered_json& schema,
                                const json_schema_options& opts, const compile_limits& limits) {
  compile_budget budget(limits);
  return json_schema_to_gbnf(schema, opts, budget);
}

std::string json_schema_to_gbnf(const nlohmann::json& schema, const json_schema_options& opts,
                                compile_budget& budget) {
  check_document_depth(schema);  // before the copy
  return json_schema_to_gbnf(nlohmann::ordered_json(schema), opts, budget);
}

std::string json_schema_to_gbnf(const nlohmann::json& schema, const json_schema_options& opts,
                                const compile_limits& limits) {
  compile_budget budget(limits);
  return json_schema_to_gbnf(schema, opts, budget);
}

std::string json_object_gbnf(const json_schema_options& opts) {
  const nlohmann::ordered_json empty = nlohmann::ordered_json::object();
  compile_budget budget;  // a fixed grammar: the defaults never bind
  json_schema_detail::converter c(empty, opts, budget);
  return c.convert_any_object();
}

}  // namespace courier::grammar
