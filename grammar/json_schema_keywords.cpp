// The keywords of a JSON Schema the converter knows: which are supported, which are annotations,
// which types each constrains, and the checks of their values.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "grammar/json_schema_internal.hpp"

namespace courier::grammar::json_schema_detail {

bool is_annotation(std::string_view k) {
  static const std::set<std::string_view> annotations = {
      "title",    "description", "default",  "examples",  "$schema", "$id",
      "$comment", "deprecated",  "readOnly", "writeOnly", "strict"};
  return annotations.count(k) != 0;
}

// Every supported keyword, and the types it constrains (0: it applies to every type). A schema
// without `type` is taken to be of the types its keywords constrain, or of any type.
const std::map<std::string_view, unsigned>& keyword_types() {
  static const std::map<std::string_view, unsigned> k = {
      {"type", 0},
      {"enum", 0},
      {"const", 0},
      {"anyOf", 0},
      {"oneOf", 0},
      {"allOf", 0},
      {"$ref", 0},
      {"$defs", 0},
      {"definitions", 0},
      {"nullable", 0},
      {"properties", type_object},
      {"required", type_object},
      {"additionalProperties", type_object},
      {"items", type_array},
      {"prefixItems", type_array},
      {"minItems", type_array},
      {"maxItems", type_array},
      {"minLength", type_string},
      {"maxLength", type_string},
      {"pattern", type_string},
      {"format", type_string},
      {"minimum", type_number | type_integer},
      {"maximum", type_number | type_integer},
      {"exclusiveMinimum", type_number | type_integer},
      {"exclusiveMaximum", type_number | type_integer},
  };
  return k;
}

bool has_type(const json& v, unsigned types) {
  if ((types & type_null) && v.is_null()) return true;
  if ((types & type_boolean) && v.is_boolean()) return true;
  if ((types & type_object) && v.is_object()) return true;
  if ((types & type_array) && v.is_array()) return true;
  if ((types & type_string) && v.is_string()) return true;
  if ((types & type_number) && v.is_number()) return true;
  if ((types & type_integer) && (v.is_number_integer() || v.is_number_unsigned())) return true;
  // JSON Schema: an integer is any number with a zero fractional part, 1.0 included.
  if ((types & type_integer) && v.is_number_float()) {
    const double d = v.get<double>();
    return std::isfinite(d) && std::floor(d) == d;
  }
  return false;
}

unsigned converter::declared_types(const json& schema, const location& at) const {
  unsigned types = 0;
  const auto type = schema.find("type");
  if (type != schema.end()) {
    const json names = type->is_array() ? *type : json::array({*type});
    for (const json& name : names) {
      unsigned bit = 0;
      for (const auto& [n, b] : type_names) {
        if (name == n) bit = b;
      }
      if (bit == 0) fail(child(at, "type"), fmt::format("unknown type {}", name.dump()));
      types |= bit;
    }
  } else {
    for (const auto& [key, value] : schema.items()) {
      const auto k = keyword_types().find(key);
      if (k != keyword_types().end()) types |= k->second;
    }
    if (types == 0) types = type_any;
  }
  // A number may be an integer already: one alternative, not two that overlap.
  if (types & type_number) types &= ~unsigned{type_integer};
  return types;
}

void converter::check_keywords(const json& schema, const location& at) const {
  for (const auto& [key, value] : schema.items()) {
    if (is_annotation(key)) continue;
    if (keyword_types().count(key) == 0) fail(at, fmt::format("unsupported keyword '{}'", key));
    const location here = child(at, key);
    const std::string name = key;  // a lambda cannot capture a structured binding (C++17)
    const auto need = [&](bool ok, const char* what) {
      if (!ok) fail(here, fmt::format("'{}' must be {}", name, what));
    };
    if (key == "type") {
      const bool names =
          value.is_array() && !value.empty() &&
          std::all_of(value.begin(), value.end(), [](const json& v) { return v.is_string(); });
      need(value.is_string() || names, "a type name or a non-empty array of them");
    } else if (key == "properties" || key == "$defs" || key == "definitions") {
      need(value.is_object(), "an object");
    } else if (key == "required") {
      need(value.is_array() &&
               std::all_of(value.begin(), value.end(), [](const json& v) { return v.is_string(); }),
           "an array of strings");
    } else if (key == "additionalProperties" || key == "items") {
      need(value.is_boolean() || value.is_object(), "a schema (an object or a boolean)");
    } else if (key == "prefixItems") {
      need(value.is_array(), "an array of schemas");
    } else if (key == "anyOf" || key == "oneOf" || key == "allOf") {
      need(value.is_array() && !value.empty(), "a non-empty array of schemas");
    } else if (key == "enum") {
      need(value.is_array(), "an array");
      if (value.empty()) fail(here, "'enum' is empty: no value is allowed");
    } else if (key == "minItems" || key == "maxItems" || key == "minLength" || key == "maxLength") {
      count_keyword(schema, key.c_str(), 0, at);
    } else if (key == "pattern" || key == "format" || key == "$ref") {
      need(value.is_string(), "a string");
    } else if (key == "minimum" || key == "maximum") {
      need(value.is_number(), "a number");
    } else if (key == "exclusiveMinimum" || key == "exclusiveMaximum") {
      need(value.is_number() || value.is_boolean(), "a number");
    } else if (key == "nullable") {
      need(value.is_boolean(), "a boolean");
    }
  }
}

std::uint64_t converter::count_keyword(const json& schema, const char* keyword,
                                       std::uint64_t fallback, const location& at) const {
  const auto it = schema.find(keyword);
  if (it == schema.end()) return fallback;
  if (it->is_number_unsigned()) return it->get<std::uint64_t>();
  if (it->is_number_integer() && it->get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(it->get<std::int64_t>());
  }
  if (it->is_number_float()) {
    const double d = it->get<double>();
    // 2^64: the first double past the largest count.
    if (d >= 0 && d < 18446744073709551616.0 && std::floor(d) == d) {
      return static_cast<std::uint64_t>(d);
    }
  }
  fail(child(at, keyword), fmt::format("'{}' must be a non-negative integer", keyword));
}

void converter::check_only_annotations_beside(const json& schema, const location& at,
                                              std::string_view keyword) const {
  for (const auto& [key, value] : schema.items()) {
    if (key == keyword || is_annotation(key) || key == "$defs" || key == "definitions" ||
        key == "nullable") {
      continue;
    }
    fail(at, fmt::format("keyword '{}' beside '{}' is unsupported", key, keyword));
  }
}

}  // namespace courier::grammar::json_schema_detail
