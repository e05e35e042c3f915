// The filters on text, numbers and JSON, and the filter lookup.
#include "text/jinja/filters.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <unordered_map>

#include "base/markup_escape.hpp"
#include "text/jinja/json_text.hpp"
#include "text/jinja/string_format.hpp"
#include "text/jinja/template_error.hpp"
#include "text/jinja/utf8.hpp"

namespace courier::text::jinja {

namespace {

// Jinja's text filters take anything and work on its text form.
std::string text_of(const value& v, render_state& state) {
  return v.is_string() ? v.as_string() : state.text(v);
}

value made_text(std::string s, render_state& state) {
  state.charge_text(s.size());
  return value(std::move(s));
}

std::string capitalize(std::string_view s) {
  std::string out = utf8::to_lower(s);
  if (!out.empty()) out[0] = utf8::to_upper(out.substr(0, 1))[0];
  return out;
}

// Jinja's title filter: a word starts after a space, '-', or an opening bracket.
std::string title(std::string_view s) {
  std::string out(s);
  bool start = true;
  for (char& c : out) {
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (letter) {
      c = start ? utf8::to_upper(std::string(1, c))[0] : utf8::to_lower(std::string(1, c))[0];
    }
    start = c == ' ' || c == '\t' || c == '\n' || c == '-' || c == '(' || c == '{' || c == '[' ||
            c == '<';
  }
  return out;
}

std::string replace_all(const std::string& s, const std::string& from, const std::string& to,
                        std::int64_t count, render_state& state) {
  std::string out;
  if (from.empty()) {
    // Python inserts `to` before every code point and at the end.
    std::int64_t n = 0;
    for (std::size_t pos = 0; pos < s.size(); ++n) {
      if (count < 0 || n < count) out += to;
      const std::size_t start = pos;
      utf8::decode(s, pos);
      out.append(s, start, pos - start);
      state.check_text(out.size());
    }
    if (count < 0 || n < count) out += to;
    return out;
  }
  std::size_t pos = 0;
  for (std::int64_t n = 0; count < 0 || n < count; ++n) {
    const std::size_t hit = s.find(from, pos);
    if (hit == std::string::npos) break;
    out.append(s, pos, hit - pos);
    out += to;
    pos = hit + from.size();
    state.check_text(out.size());
  }
  out.append(s, pos, std::string::npos);
  return out;
}

value f_replace(const value& in, const call_args& a, render_state& st) {
  a.expect("replace", {"old", "new", "count"});
  const std::string from = require_string(a.get(0, "old"), "replace: old");
  const std::string to = require_string(a.get(1, "new"), "replace: new");
  const value count = a.get(2, "count", value::none());
  const std::int64_t n = count.is_none() ? -1 : require_int(count, "replace: count");
  return made_text(replace_all(text_of(in, st), from, to, n, st), st);
}

value f_trim(const value& in, const call_args& a, render_state& st) {
  a.expect("trim", {"chars"});
  const std::string s = text_of(in, st);
  const value chars = a.get(0, "chars", value::none());
  if (chars.is_none()) return value(utf8::trim(s, true, true));
  return value(utf8::trim_chars(s, require_string(chars, "trim: chars"), true, true));
}

value f_tojson(const value& in, const call_args& a, render_state& st) {
  // transformers' signature, which replaces Jinja's own tojson.
  a.expect("tojson", {"ensure_ascii", "indent", "separators", "sort_keys"});
  json_style style;
  style.ensure_ascii = truthy(a.get(0, "ensure_ascii", value(false)));
  const value indent = a.get(1, "indent", value::none());
  if (indent.is_string()) {
    style.indent = indent.as_string();
  } else if (!indent.is_none()) {
    const std::int64_t n = require_int(indent, "tojson: indent");
    if (n < 0 || n > 64) throw template_error("tojson: indent must be in [0, 64]");
    if (n > 0) style.indent = std::string(static_cast<std::size_t>(n), ' ');  // 0: one line
  }
  const value separators = a.get(2, "separators", value::none());
  if (!separators.is_none()) {
    if (!separators.is_array() || separators.as_array().size() != 2) {
      throw template_error("tojson: separators must be a pair of strings");
    }
    style.item_separator = require_string(separators.as_array()[0], "tojson: separators");
    style.key_separator = require_string(separators.as_array()[1], "tojson: separators");
  }
  style.sort_keys = truthy(a.get(3, "sort_keys", value(false)));
  style.max_bytes = st.options().max_output_bytes;
  return made_text(to_json_text(in, style), st);
}

value f_indent(const value& in, const call_args& a, render_state& st) {
  a.expect("indent", {"width", "first", "blank"});
  const value width = a.get(0, "width", value(4));
  std::string pad;
  if (width.is_string()) {
    pad = width.as_string();
  } else {
    const std::int64_t n = require_int(width, "indent: width");
    if (n < 0 || n > 1000) throw template_error("indent: width must be in [0, 1000]");
    pad.assign(static_cast<std::size_t>(n), ' ');
  }
  const bool first = truthy(a.get(1, "first", value(false)));
  const bool blank = truthy(a.get(2, "blank", value(false)));
  // Jinja's rule: every line after the first gets the pad unless it is empty (and `blank` is
  // off); `first` pads the first line whatever it holds.
  const std::string s = text_of(in, st);
  std::string out = first ? pad : "";
  std::size_t start = 0;
  for (bool first_line = true;; first_line = false) {
    const std::size_t end = std::min(s.find('\n', start), s.size());
    if (!first_line) {
      out += '\n';
      if (end > start || blank) out += pad;
    }
    out.append(s, start, end - start);
    st.check_text(out.size());
    if (end == s.size()) break;
    start = end + 1;
  }
  return made_text(std::move(out), st);
}

value f_int(const value& in, const call_args& a, render_state&) {
  a.expect("int", {"default", "base"});
  const value fallback = a.get(0, "default", value(0));
  const int base = static_cast<int>(require_int(a.get(1, "base", value(10)), "int: base"));
  if (in.is_int()) return in;
  if (in.is_bool()) return value(in.as_bool() ? 1 : 0);
  if (in.is_float()) {
    const double d = std::trunc(in.as_float());
    return std::fabs(d) < 9.2e18 ? value(static_cast<std::int64_t>(d)) : fallback;
  }
  if (!in.is_string() || base < 2 || base > 36) return fallback;
  const std::string s(utf8::trim(in.as_string(), true, true));
  if (s.empty()) return fallback;
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(s.c_str(), &end, base);
  if (*end == '\0' && errno == 0) return value(static_cast<std::int64_t>(n));
  const double d = std::strtod(s.c_str(), &end);
  if (*end == '\0' && std::isfinite(d) && std::fabs(d) < 9.2e18) {
    return value(static_cast<std::int64_t>(d));
  }
  return fallback;
}

value f_float(const value& in, const call_args& a, render_state&) {
  a.expect("float", {"default"});
  if (in.is_float()) return in;
  if (in.is_int() || in.is_bool()) return value(require_number(in, "float"));
  if (in.is_string()) {
    const std::string s(utf8::trim(in.as_string(), true, true));
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && *end == '\0') return value(d);
  }
  return a.get(0, "default", value(0.0));
}

value f_round(const value& in, const call_args& a, render_state&) {
  a.expect("round", {"precision", "method"});
  const double x = require_number(in, "round");
  const std::int64_t precision = require_int(a.get(0, "precision", value(0)), "round: precision");
  const value method = a.get(1, "method", value("common"));
  const double scale =
      std::pow(10.0, static_cast<double>(std::clamp<std::int64_t>(precision, -300, 300)));
  const std::string m = require_string(method, "round: method");
  double r = 0;
  if (m == "common") {
    r = std::nearbyint(x * scale) / scale;  // ties to even, as Python's round()
  } else if (m == "ceil") {
    r = std::ceil(x * scale) / scale;
  } else if (m == "floor") {
    r = std::floor(x * scale) / scale;
  } else {
    throw template_error("round: method must be common, ceil or floor");
  }
  return value(r);
}

value f_escape(const value& in, const call_args& a, render_state& st) {
  a.expect("escape", {});
  return made_text(base::escape_markup(text_of(in, st)), st);
}

value f_default(const value& in, const call_args& a, render_state&) {
  a.expect("default", {"default_value", "boolean"});
  const bool boolean = truthy(a.get(1, "boolean", value(false)));
  if (in.is_undefined() || (boolean && !truthy(in))) return a.get(0, "default_value", value(""));
  return in;
}

value f_abs(const value& in, const call_args& a, render_state&) {
  a.expect("abs", {});
  if (in.is_float()) return value(std::fabs(in.as_float()));
  const std::int64_t n = require_int(in, "abs");
  if (n == INT64_MIN) throw template_error("integer overflow");
  return value(n < 0 ? -n : n);
}

value f_wordcount(const value& in, const call_args& a, render_state& st) {
  a.expect("wordcount", {});
  std::int64_t words = 0;
  bool inside = false;
  for (char c : text_of(in, st)) {
    const auto u = static_cast<unsigned char>(c);
    const bool word = u >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                      (c >= 'A' && c <= 'Z') || c == '_';
    words += word && !inside;
    inside = word;
  }
  return value(words);
}

}  // namespace

const std::vector<filter_entry>& text_filters() {
  static const std::vector<filter_entry> filters = {
      {"safe",
       [](const value& in, const call_args& a, render_state&) {
         a.expect("safe", {});
         return in;
       }},
      {"string",
       [](const value& in, const call_args& a, render_state& st) {
         a.expect("string", {});
         return value(text_of(in, st));
       }},
      {"upper",
       [](const value& in, const call_args& a, render_state& st) {
         a.expect("upper", {});
         return value(utf8::to_upper(text_of(in, st)));
       }},
      {"lower",
       [](const value& in, const call_args& a, render_state& st) {
         a.expect("lower", {});
         return value(utf8::to_lower(text_of(in, st)));
       }},
      {"capitalize",
       [](const value& in, const call_args& a, render_state& st) {
         a.expect("capitalize", {});
         return value(capitalize(text_of(in, st)));
       }},
      {"title",
       [](const value& in, const call_args& a, render_state& st) {
         a.expect("title", {});
         return value(title(text_of(in, st)));
       }},
      {"format",
       [](const value& in, const call_args& a, render_state& st) {
         if (!a.keyword.empty())
           throw template_error("format: keyword arguments are not supported");
         return made_text(percent_format(text_of(in, st), a.positional, st), st);
       }},
      {"trim", f_trim},
      {"replace", f_replace},
      {"tojson", f_tojson},
      {"indent", f_indent},
      {"int", f_int},
      {"float", f_float},
      {"round", f_round},
      {"abs", f_abs},
      {"escape", f_escape},
      {"e", f_escape},
      {"default", f_default},
      {"d", f_default},
      {"wordcount", f_wordcount},
  };
  return filters;
}

filter_fn find_filter(std::string_view name) {
  static const auto table = [] {
    std::unordered_map<std::string_view, filter_fn> t;
    for (const auto& f : text_filters()) t.emplace(f.name, f.fn);
    for (const auto& f : collection_filters()) t.emplace(f.name, f.fn);
    return t;
  }();
  const auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}

}  // namespace courier::text::jinja
