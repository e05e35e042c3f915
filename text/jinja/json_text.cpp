#include "text/jinja/json_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "text/jinja/template_error.hpp"
#include "text/jinja/utf8.hpp"

namespace courier::text::jinja {

namespace {

void append_escaped(std::string& out, std::string_view s, bool ensure_ascii) {
  out += '"';
  for (std::size_t pos = 0; pos < s.size();) {
    const char c = s[pos];
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x80 && !ensure_ascii) {
      out += c;
      ++pos;
      continue;
    }
    if (u >= 0x80 || u == 0x7F) {
      // ensure_ascii: UTF-16 escapes, a surrogate pair above the BMP (as JSON.stringify does).
      char32_t cp = utf8::decode(s, pos);
      if (cp >= 0x10000) {
        cp -= 0x10000;
        out += fmt::format("\\u{:04x}\\u{:04x}", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
      } else {
        out += fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
      }
      continue;
    }
    ++pos;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (u < 0x20) {
          out += fmt::format("\\u{:04x}", u);
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

class json_writer {
 public:
  explicit json_writer(const json_style& style)
      : style_(style), item_separator_(style.item_separator.value_or(style.indent ? "," : ", ")) {}

  void write(const value& v, int depth) {
    if (depth > max_value_depth) throw template_error("value nested too deeply for tojson");
    if (out_.size() > style_.max_bytes) {
      throw template_error("text longer than the limit of " + std::to_string(style_.max_bytes) +
                           " bytes");
    }
    switch (v.type()) {
      case value::kind::undefined:
      case value::kind::none:
        out_ += "null";
        return;
      case value::kind::boolean:
        out_ += v.as_bool() ? "true" : "false";
        return;
      case value::kind::integer:
        out_ += std::to_string(v.as_int());
        return;
      case value::kind::floating:
        out_ += std::isfinite(v.as_float()) ? format_js_number(v.as_float()) : "null";
        return;
      case value::kind::string:
        append_escaped(out_, v.as_string(), style_.ensure_ascii);
        return;
      case value::kind::array:
        write_array(v.as_array(), depth);
        return;
      case value::kind::object:
        write_object(v.as_object(), depth);
        return;
      case value::kind::function:
        throw template_error("cannot convert function '" + v.as_function().name + "' to JSON");
    }
  }

  std::string take() { return std::move(out_); }

 private:
  void newline(int depth) {
    out_ += '\n';
    for (int i = 0; i < depth; ++i) out_ += *style_.indent;
  }

  void write_array(const std::vector<value>& items, int depth) {
    out_ += '[';
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out_ += item_separator_;
      if (style_.indent) newline(depth + 1);
      write(items[i], depth + 1);
    }
    if (style_.indent && !items.empty()) newline(depth);
    out_ += ']';
  }

  void write_object(const object_data& obj, int depth) {
    std::vector<const std::pair<std::string, value>*> entries;
    for (const auto& e : obj.entries()) entries.push_back(&e);
    if (style_.sort_keys) {
      // UTF-8 byte order is code point order.
      std::stable_sort(entries.begin(), entries.end(),
                       [](const auto* a, const auto* b) { return a->first < b->first; });
    }
    out_ += '{';
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (i > 0) out_ += item_separator_;
      if (style_.indent) newline(depth + 1);
      append_escaped(out_, entries[i]->first, style_.ensure_ascii);
      out_ += style_.key_separator;
      write(entries[i]->second, depth + 1);
    }
    if (style_.indent && !entries.empty()) newline(depth);
    out_ += '}';
  }

  const json_style& style_;
  std::string item_separator_;
  std::string out_;
};

}  // namespace

std::string to_json_text(const value& v, const json_style& style) {
  json_writer w(style);
  w.write(v, 0);
  std::string out = w.take();
  if (out.size() > style.max_bytes) {
    throw template_error("text longer than the limit of " + std::to_string(style.max_bytes) +
                         " bytes");
  }
  return out;
}

std::string format_js_number(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  if (d == 0) return "0";
  // fmt's "{}" gives the shortest round-trip digits; only their layout differs from JS.
  const std::string repr = fmt::format("{}", std::fabs(d));
  const std::size_t e = repr.find_first_of("eE");
  const std::string mantissa = repr.substr(0, e);
  const long exponent = e == std::string::npos ? 0 : std::strtol(repr.c_str() + e + 1, nullptr, 10);
  const std::size_t dot = mantissa.find('.');
  std::string digits = mantissa;
  long point = static_cast<long>(dot == std::string::npos ? mantissa.size() : dot) + exponent;
  if (dot != std::string::npos) digits.erase(dot, 1);
  // Normalise to digits d1..dk (d1 != 0, dk != 0) with value 0.d1..dk * 10^point.
  const std::size_t first = digits.find_first_not_of('0');
  point -= static_cast<long>(first);
  digits.erase(0, first);
  digits.erase(digits.find_last_not_of('0') + 1);
  const long k = static_cast<long>(digits.size());
  const long n = point;
  std::string out = d < 0 ? "-" : "";
  if (k <= n && n <= 21) {
    out += digits + std::string(static_cast<std::size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out += digits.substr(0, static_cast<std::size_t>(n)) + "." +
           digits.substr(static_cast<std::size_t>(n));
  } else if (-6 < n && n <= 0) {
    out += "0." + std::string(static_cast<std::size_t>(-n), '0') + digits;
  } else {
    out += digits.substr(0, 1);
    if (k > 1) out += "." + digits.substr(1);
    out += fmt::format("e{}{}", n - 1 >= 0 ? "+" : "-", std::labs(n - 1));
  }
  return out;
}

}  // namespace courier::text::jinja
