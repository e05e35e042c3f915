// GBNF text for the JSON Schema converter, and its rule table: names, deduplication, errors.
#include <fmt/format.h>

#include "grammar/grammar_error.hpp"
#include "grammar/json_schema_internal.hpp"

namespace courier::grammar::json_schema_detail {

namespace {

// Longest rule name stem: deep schemas would otherwise make names as long as their paths.
constexpr std::size_t max_stem_length = 40;
// A piece longer than this gets a rule of its own rather than being copied where it is used.
constexpr std::size_t max_inline_body = 160;

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

// Where the GBNF token starting at e[i] ends, or npos when e[i] starts none of: a name, a
// literal, a class, a parenthesized group.
std::size_t token_end(const std::string& e, std::size_t i) {
  const std::size_t n = e.size();
  if (i >= n) return std::string::npos;
  if (e[i] == '"' || e[i] == '[') {
    const char close = e[i] == '"' ? '"' : ']';
    for (++i; i < n && e[i] != close; ++i) {
      if (e[i] == '\\') ++i;
    }
    return i < n ? i + 1 : std::string::npos;
  }
  if (e[i] == '(') {
    int depth = 0;
    while (i < n) {
      if (e[i] == '"' || e[i] == '[') {
        i = token_end(e, i);  // a literal or class: never a group, so this does not nest
        if (i == std::string::npos) return i;
        continue;
      }
      if (e[i] == '(') ++depth;
      if (e[i] == ')' && --depth == 0) return i + 1;
      ++i;
    }
    return std::string::npos;
  }
  if (!is_name_char(e[i])) return std::string::npos;
  while (i < n && is_name_char(e[i])) ++i;
  return i;
}

}  // namespace

std::string gbnf_quote(std::string_view bytes) {
  std::string out = "\"";
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (b < 0x20 || b == 0x7F) {
      out += fmt::format("\\x{:02X}", b);
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

std::string gbnf_sequence(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    if (item.empty()) continue;
    if (!out.empty()) out += ' ';
    out += item;
  }
  return out;
}

std::string join_alternatives(const std::vector<std::string>& alts) {
  std::string out;
  for (const std::string& a : alts) {
    if (!out.empty()) out += " | ";
    out += a;
  }
  return out;
}

std::string gbnf_group(const std::string& e) {
  if (!e.empty() && token_end(e, 0) == e.size()) return e;
  return "(" + e + ")";
}

std::string gbnf_repeat(const std::string& atom, std::uint64_t min, std::uint64_t max) {
  if (max == 0 || atom.empty()) return "";
  const std::string a = gbnf_group(atom);
  if (max == unbounded) {
    if (min == 0) return a + "*";
    if (min == 1) return a + "+";
    return fmt::format("{}{{{},}}", a, min);
  }
  if (min == max) return min == 1 ? a : fmt::format("{}{{{}}}", a, min);
  if (min == 0 && max == 1) return a + "?";
  return fmt::format("{}{{{},{}}}", a, min, max);
}

std::string rule_name_stem(std::string_view hint) {
  std::string out;
  for (const char c : hint) {
    const char keep = is_name_char(c) ? c : '-';
    if (keep == '-' && (out.empty() || out.back() == '-')) continue;
    out += keep;
    if (out.size() >= max_stem_length) break;
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "schema" : out;
}

std::string pointer_segment(std::string_view key) {
  std::string out;
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string converter::add_rule(const std::string& hint, const std::string& body) {
  const auto it = rule_of_body_.find(body);
  if (it != rule_of_body_.end()) return it->second;
  std::string name = reserve_name(hint);
  define_rule(name, body);
  return name;
}

void converter::define_rule(const std::string& name, const std::string& body) {
  // The body is held twice (the rule, and the key that finds it by body), and rendered once.
  budget_.charge_memory(3 * body.size() + 2 * name.size() + 128);
  budget_.charge_work(body.size() / 16 + 1);
  rules_.emplace_back(name, body);
  rule_of_body_.emplace(body, name);
}

std::string converter::reserve_name(const std::string& hint) {
  const std::string stem = rule_name_stem(hint);
  std::string name = stem;
  for (int i = 2; names_.count(name) != 0; ++i) name = fmt::format("{}-{}", stem, i);
  names_.insert(name);
  return name;
}

std::string converter::finish(const location& at, const std::string& body, bool own_rule) {
  if (!at.own_name.empty()) {
    define_rule(at.own_name, body);
    return at.own_name;
  }
  if (own_rule || body.size() > max_inline_body) return add_rule(at.hint, body);
  return gbnf_group(body);
}

std::string converter::builtin(const std::string& name) {
  if (!builtins_defined_.insert(name).second) return name;
  std::string body;
  if (name == "value" || name == "object" || name == "array") {
    body = any_value_body(name);
  } else if (name == "string") {
    body = json_string_body();
  } else if (name == "char") {
    body = json_char_body();
  } else if (name == "number") {
    body = json_number_body();
  } else if (name == "integer") {
    body = json_integer_body();
  } else {
    body = format_string_body(std::string_view(name).substr(std::string_view("format-").size()));
  }
  define_rule(name, body);
  return name;
}

void converter::fail(const location& at, const std::string& what) const {
  throw grammar_error(fmt::format("json schema: {} at {}", what,
                                  at.pointer.empty() ? std::string("the root") : at.pointer));
}

location converter::child(const location& at, std::string_view keyword) const {
  location out;
  out.pointer = fmt::format("{}/{}", at.pointer, keyword);
  out.hint = at.hint;
  out.depth = at.depth + 1;
  return out;
}

location converter::child(const location& at, std::string_view keyword, std::string_view key,
                          std::string_view hint) const {
  location out = child(at, keyword);
  out.pointer += '/';
  out.pointer += pointer_segment(key);
  out.hint = std::string(hint);
  return out;
}

}  // namespace courier::grammar::json_schema_detail
