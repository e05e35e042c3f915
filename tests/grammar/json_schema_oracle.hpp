#pragma once
// Test reference for grammar/json_schema: a small JSON Schema validator for the subset the
// converter supports, written from the specification and independent of the grammar, plus
// the converter's documented choices (properties in the schema's order, extra members after
// the declared ones); and the checks the tests make with it: a text the schema's grammar
// accepts must parse as JSON and pass the validator.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "grammar/compiled_grammar.hpp"
#include "grammar/json_schema.hpp"
#include "grammar/matcher.hpp"

namespace courier::grammar::testing {

using ojson = nlohmann::ordered_json;

inline std::size_t code_points(const std::string& s) {
  std::size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

inline bool valid_date(const std::string& s) {
  static const std::regex re(R"(^(\d{4})-(\d{2})-(\d{2})$)");
  std::smatch m;
  if (!std::regex_match(s, m, re)) return false;
  const int year = std::stoi(m[1]);
  const int month = std::stoi(m[2]);
  const int day = std::stoi(m[3]);
  static const int days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (month == 2 && day == 29 && !leap) return false;  // as ajv-formats checks it
  return month >= 1 && month <= 12 && day >= 1 && day <= days[month - 1];
}

// Without leap seconds: the grammar leaves them out (json_schema.hpp says why).
inline bool valid_time(const std::string& s) {
  static const std::regex re(
      R"(^([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$)");
  return std::regex_match(s, re);
}

inline bool valid_format(const std::string& format, const std::string& s) {
  if (format == "date") return valid_date(s);
  if (format == "time") return valid_time(s);
  if (format == "date-time") {
    return s.size() > 11 && (s[10] == 'T' || s[10] == 't') && valid_date(s.substr(0, 10)) &&
           valid_time(s.substr(11));
  }
  if (format == "uuid") {
    static const std::regex re(
        "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$");
    return std::regex_match(s, re);
  }
  if (format == "email") {
    static const std::regex re(R"(^[^@\s"\\]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$)");
    return std::regex_match(s, re);
  }
  return false;
}

inline bool is_integer(const ojson& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return true;
  return v.is_number_float() && std::floor(v.get<double>()) == v.get<double>();
}

inline bool has_type(const ojson& v, const std::string& t) {
  if (t == "null") return v.is_null();
  if (t == "boolean") return v.is_boolean();
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "string") return v.is_string();
  if (t == "number") return v.is_number();
  if (t == "integer") return is_integer(v);
  return false;
}

// Numbers compared as long double: exact for the integers and short decimals the tests use.
inline long double num(const ojson& v) {
  if (v.is_number_unsigned()) return static_cast<long double>(v.get<std::uint64_t>());
  if (v.is_number_integer()) return static_cast<long double>(v.get<std::int64_t>());
  return static_cast<long double>(v.get<double>());
}

inline bool conforms(const ojson& v, const ojson& schema, const ojson& root, int depth = 0);

inline bool conforms_object(const ojson& v, const ojson& schema, const ojson& root, int depth) {
  const ojson props = schema.value("properties", ojson::object());
  // Declared properties in the schema's order, then the others.
  std::size_t next_declared = 0;
  bool extras_started = false;
  std::vector<std::string> order;
  for (const auto& [k, unused] : props.items()) order.push_back(k);
  for (const auto& [key, value] : v.items()) {
    const auto pos = std::find(order.begin(), order.end(), key);
    if (pos != order.end()) {
      const auto index = static_cast<std::size_t>(pos - order.begin());
      if (index < next_declared || extras_started) return false;
      next_declared = index + 1;
      if (!conforms(value, props.at(key), root, depth + 1)) return false;
      continue;
    }
    extras_started = true;
    const ojson additional = schema.value("additionalProperties", ojson(true));
    if (!conforms(value, additional, root, depth + 1)) return false;
  }
  for (const ojson& r : schema.value("required", ojson::array())) {
    if (!v.contains(r.get<std::string>())) return false;
  }
  return true;
}

inline bool conforms_array(const ojson& v, const ojson& schema, const ojson& root, int depth) {
  const ojson prefix = schema.value("prefixItems", ojson::array());
  const ojson items = schema.value("items", ojson(true));
  for (std::size_t i = 0; i < v.size(); ++i) {
    const ojson& s = i < prefix.size() ? prefix[i] : items;
    if (!conforms(v[i], s, root, depth + 1)) return false;
  }
  if (v.size() < schema.value("minItems", std::uint64_t{0})) return false;
  return v.size() <= schema.value("maxItems", ~std::uint64_t{0});
}

inline bool conforms_scalar(const ojson& v, const ojson& schema) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    const std::size_t n = code_points(s);
    if (n < schema.value("minLength", std::uint64_t{0})) return false;
    if (n > schema.value("maxLength", ~std::uint64_t{0})) return false;
    if (schema.contains("pattern") &&
        !std::regex_search(s, std::regex(schema["pattern"].get<std::string>()))) {
      return false;
    }
    if (schema.contains("format") && !valid_format(schema["format"], s)) return false;
  }
  if (v.is_number()) {
    const long double x = num(v);
    const auto bound = [&](const char* k) { return num(schema.at(k)); };
    const bool xmin_flag = schema.value("exclusiveMinimum", ojson(false)) == ojson(true);
    const bool xmax_flag = schema.value("exclusiveMaximum", ojson(false)) == ojson(true);
    if (schema.contains("minimum") && (xmin_flag ? x <= bound("minimum") : x < bound("minimum")))
      return false;
    if (schema.contains("maximum") && (xmax_flag ? x >= bound("maximum") : x > bound("maximum")))
      return false;
    if (schema.contains("exclusiveMinimum") && schema["exclusiveMinimum"].is_number() &&
        x <= bound("exclusiveMinimum"))
      return false;
    if (schema.contains("exclusiveMaximum") && schema["exclusiveMaximum"].is_number() &&
        x >= bound("exclusiveMaximum"))
      return false;
  }
  return true;
}

inline bool conforms(const ojson& v, const ojson& schema, const ojson& root, int depth) {
  if (depth > 5000) return false;
  if (schema.is_boolean()) return schema.get<bool>();
  if (schema.value("nullable", false) && v.is_null()) return true;
  if (schema.contains("$ref")) {
    std::string ref = schema["$ref"];
    for (std::size_t at; (at = ref.find("%24")) != std::string::npos;) ref.replace(at, 3, "$");
    return conforms(v, root.at(ojson::json_pointer(ref.substr(1))), root, depth + 1);
  }
  if (schema.contains("anyOf") || schema.contains("allOf")) {
    const bool any = schema.contains("anyOf");
    for (const ojson& s : schema[any ? "anyOf" : "allOf"]) {
      if (conforms(v, s, root, depth + 1) == any) return any;
    }
    return !any;
  }
  if (schema.contains("oneOf")) {
    int n = 0;
    for (const ojson& s : schema["oneOf"]) n += conforms(v, s, root, depth + 1);
    return n == 1;
  }
  if (schema.contains("enum")) {
    const ojson& e = schema["enum"];
    if (std::find(e.begin(), e.end(), v) == e.end()) return false;
  }
  if (schema.contains("const") && v != schema["const"]) return false;
  if (schema.contains("type")) {
    const ojson types = schema["type"].is_array() ? schema["type"] : ojson::array({schema["type"]});
    bool ok = false;
    for (const ojson& t : types) ok = ok || has_type(v, t.get<std::string>());
    if (!ok) return false;
  }
  if (v.is_object()) return conforms_object(v, schema, root, depth);
  if (v.is_array()) return conforms_array(v, schema, root, depth);
  return conforms_scalar(v, schema);
}

// A schema and its compiled grammar.
struct schema_language {
  ojson schema;
  std::shared_ptr<const compiled_grammar> grammar;
};

inline schema_language compile_schema(const std::string& schema_text,
                                      const json_schema_options& opts = {}) {
  schema_language l;
  l.schema = ojson::parse(schema_text);
  const std::string gbnf = json_schema_to_gbnf(l.schema, opts);
  INFO("gbnf:\n" << gbnf);
  REQUIRE_NOTHROW(l.grammar = compile_gbnf(gbnf));
  return l;
}

// `text` is in the language, parses as JSON and conforms to the schema.
inline void check_accepts(const schema_language& l, const std::string& text) {
  INFO("text: " << text);
  CHECK(full_match(l.grammar, text));
  const ojson v = ojson::parse(text, nullptr, false);
  REQUIRE_FALSE(v.is_discarded());
  CHECK(conforms(v, l.schema, l.schema));
}

inline void check_rejects(const schema_language& l, const std::string& text) {
  INFO("text: " << text);
  CHECK_FALSE(full_match(l.grammar, text));
}

inline void check_language(const std::string& schema_text, const std::vector<std::string>& accepted,
                           const std::vector<std::string>& rejected,
                           const json_schema_options& opts = {}) {
  INFO("schema: " << schema_text);
  const schema_language l = compile_schema(schema_text, opts);
  for (const std::string& text : accepted) check_accepts(l, text);
  for (const std::string& text : rejected) check_rejects(l, text);
}

}  // namespace courier::grammar::testing
