#pragma once
// The `tojson` filter and the JSON form in which lists and mappings print. The format is
// @huggingface/jinja's (which follows Python's json.dumps as transformers calls it): keys in
// insertion order, ", " and ": " separators, "," plus newline and indent when indenting, and
// nothing escaped beyond what JSON requires: no HTML escaping, non-ASCII kept as UTF-8.
#include <cstdint>
#include <optional>
#include <string>

#include "text/jinja/value.hpp"

namespace courier::text::jinja {

struct json_style {
  std::optional<std::string> indent;          // one level's indent; empty: everything on one line
  std::optional<std::string> item_separator;  // default ", ", or "," when indenting
  std::string key_separator = ": ";
  bool ensure_ascii = false;  // escape every code point from U+007F up as \uXXXX
  bool sort_keys = false;     // by code point, as Python sorts
  // Longer output is a template_error: a list can hold one long string many times over.
  std::size_t max_bytes = SIZE_MAX;
};

// Undefined writes as null; a function is a template_error.
std::string to_json_text(const value& v, const json_style& style = {});

// A double as JavaScript's Number.prototype.toString writes it: the shortest round-trip
// digits, no ".0" on integers, an exponent below 1e-6 and from 1e21 ("1e-7", "1e+21").
std::string format_js_number(double d);

}  // namespace courier::text::jinja
