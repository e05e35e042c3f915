// Strings of a JSON Schema (plain, bounded in length, `pattern`, `format`) and JSON's string
// syntax itself.
//
// A JSON string is text with escapes, and a schema constrains the decoded characters. Plain and
// length-bounded strings allow every escape (a `\uXXXX` surrogate pair counts as one
// character). For `pattern`, each character the pattern allows is written one way only: as
// itself, or, where JSON requires an escape (`"`, `\` and control characters), as the short
// escape (\" \\ \b \f \n \r \t) or else `\u00xx`; the optional escapes (`\/`, `\uXXXX` for any
// other character) are not offered. One writing per character keeps the pattern's automaton as
// small as the pattern's own; llama.cpp goes further and offers no escape at all.
#include <fmt/format.h>

#include <algorithm>

#include "grammar/expr.hpp"
#include "grammar/grammar_error.hpp"
#include "grammar/json_schema_internal.hpp"
#include "grammar/regex_parser.hpp"

namespace courier::grammar::json_schema_detail {

namespace {

const std::string quote_mark = gbnf_quote("\"");

// The characters a JSON string cannot hold as themselves.
constexpr char32_t escaped_chars[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                                      0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11,
                                      0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1A,
                                      0x1B, 0x1C, 0x1D, 0x1E, 0x1F, U'"', U'\\'};

bool needs_escape(char32_t c) {
  return c < 0x20 || c == U'"' || c == U'\\';
}

// The one way the pattern grammar writes `c` (one of escaped_chars) in JSON text.
std::string escape(char32_t c) {
  switch (c) {
    case U'"':
      return "\\\"";
    case U'\\':
      return "\\\\";
    case U'\b':
      return "\\b";
    case U'\f':
      return "\\f";
    case U'\n':
      return "\\n";
    case U'\r':
      return "\\r";
    case U'\t':
      return "\\t";
    default:
      return fmt::format("\\u{:04x}", static_cast<std::uint32_t>(c));
  }
}

bool class_has(const std::vector<code_point_range>& ranges, char32_t c) {
  return std::any_of(ranges.begin(), ranges.end(),
                     [c](const code_point_range& r) { return r.first <= c && c <= r.last; });
}

// The language of `e`, a set of decoded strings, as the JSON string texts that write them.
// Recursion: bounded by the regular expression parser's max_nesting.
expr as_json_text(const expr& e, int depth) {
  if (depth > 4 * max_nesting) throw grammar_error("json schema: pattern nested too deeply");
  switch (e.k) {
    case expr::kind::empty:
      return e;
    case expr::kind::literal: {
      std::string text;
      for (const char c : e.text) {
        const auto b = static_cast<unsigned char>(c);
        text += needs_escape(b) ? escape(b) : std::string(1, c);
      }
      return expr::make_literal(std::move(text));
    }
    case expr::kind::char_class: {
      static const std::vector<code_point_range> plain_chars =
          normalize_ranges({{0x00, 0x1F}, {U'"', U'"'}, {U'\\', U'\\'}}, true);
      std::vector<code_point_range> plain;
      for (const code_point_range& r : e.ranges) {
        for (const code_point_range& p : plain_chars) {
          const char32_t first = std::max(r.first, p.first);
          const char32_t last = std::min(r.last, p.last);
          if (first <= last) plain.push_back({first, last});
        }
      }
      // The escapes as few alternatives: `\` and a class of short escape letters, and `\u00`
      // with each high digit and a class of low digits.
      std::vector<code_point_range> short_letters;
      std::vector<code_point_range> low_digits[2];
      for (const char32_t c : escaped_chars) {
        if (!class_has(e.ranges, c)) continue;
        const std::string text = escape(c);
        const auto last = static_cast<unsigned char>(text.back());
        if (text.size() == 2) {
          short_letters.push_back({last, last});
        } else {
          low_digits[c >> 4].push_back({last, last});
        }
      }
      std::vector<expr> alts;
      if (!plain.empty()) alts.push_back(expr::make_class(std::move(plain)));
      if (!short_letters.empty()) {
        alts.push_back(expr::make_sequence(
            {expr::make_literal("\\"), expr::make_class(std::move(short_letters))}));
      }
      for (int high = 0; high < 2; ++high) {
        if (low_digits[high].empty()) continue;
        alts.push_back(expr::make_sequence({expr::make_literal(fmt::format("\\u00{}", high)),
                                            expr::make_class(std::move(low_digits[high]))}));
      }
      return expr::make_alternation(std::move(alts));
    }
    case expr::kind::rule_ref:
      throw grammar_error("json schema: a pattern cannot refer to a rule");
    case expr::kind::sequence:
    case expr::kind::alternation:
    case expr::kind::repeat: {
      expr out;  // not a copy of `e`: that would copy the subtree once per level
      out.k = e.k;
      out.min = e.min;
      out.max = e.max;
      for (const expr& c : e.children) out.children.push_back(as_json_text(c, depth + 1));
      return out;
    }
  }
  return e;
}

const char* const hex = "[0-9a-fA-F]";

}  // namespace

std::string json_unicode_escape_body() {
  // A \u escape of a surrogate must be a high one followed by a low one: a lone surrogate is
  // not a character (and JSON parsers reject it).
  return fmt::format(
      "\"u\" ([0-9a-cA-CefEF] {0}{{3}} | [dD] [0-7] {0}{{2}} | "
      "[dD] [89abAB] {0}{{2}} \"\\\\u\" [dD] [c-fC-F] {0}{{2}})",
      hex);
}

std::string json_char_body() {
  return fmt::format(R"([^"\\\x00-\x1F] | "\\" (["\\/bfnrt] | {}))", json_unicode_escape_body());
}

std::string json_string_body() {
  return gbnf_sequence({quote_mark, gbnf_repeat(json_char_body(), 0, unbounded), quote_mark});
}

std::string format_string_body(std::string_view format) {
  const std::string day = R"("0" [1-9] | [12] [0-9])";
  // The day must exist in the month; February 29 only in leap years (divisible by 4, and by
  // 400 when by 100), as validators check it.
  const std::string leap_year =
      R"([0-9] [0-9] ("0" [48] | [2468] [048] | [13579] [26]) | ([02468] [048] | [13579] [26]) "00")";
  const std::string date = fmt::format(
      R"([0-9]{{4}} "-" ("02-" ("0" [1-9] | "1" [0-9] | "2" [0-8]) | ("0" [469] | "11") "-" )"
      R"(({0} | "30") | ("0" [13578] | "1" [02]) "-" ({0} | "3" [01])) | ({1}) "-02-29")",
      day, leap_year);
  const std::string hour = R"(([01] [0-9] | "2" [0-3]))";
  const std::string time =
      // No leap second (:60): RFC 3339 has one only at 23:59 UTC, which the offset hides from
      // a grammar, and validators refuse it elsewhere.
      fmt::format(R"({0} ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]+)? )"
                  R"(([Zz] | [+-] {0} ":" [0-5] [0-9]))",
                  hour);
  std::string body;
  if (format == "date") {
    body = date;
  } else if (format == "time") {
    body = time;
  } else if (format == "date-time") {
    body = fmt::format("{} [Tt] {}", gbnf_group(date), time);
  } else if (format == "uuid") {
    body = fmt::format(R"({0}{{8}} "-" {0}{{4}} "-" {0}{{4}} "-" {0}{{4}} "-" {0}{{12}})", hex);
  } else if (format == "email") {
    // A practical subset of RFC 5322: a dot-atom local part (no quoted strings), and a domain of
    // at least two labels of letters, digits and inner hyphens (no IP literals).
    const std::string atext = R"([a-zA-Z0-9!#$%&'*+/=?^_`{|}~-])";
    const std::string label = R"([a-zA-Z0-9] ([a-zA-Z0-9-]* [a-zA-Z0-9])?)";
    body = fmt::format(R"({0}+ ("." {0}+)* "@" {1} ("." {1})+)", atext, label);
  } else {
    return "";
  }
  return gbnf_sequence({quote_mark, gbnf_group(body), quote_mark});
}

std::string converter::visit_string(const json& schema, const location& at) {
  const bool has_length = schema.contains("minLength") || schema.contains("maxLength");
  const std::uint64_t min_length = count_keyword(schema, "minLength", 0, at);
  const std::uint64_t max_length = count_keyword(schema, "maxLength", unbounded, at);
  if (max_length < min_length) {
    fail(at, fmt::format("minLength {} is more than maxLength {}", min_length, max_length));
  }
  const auto pattern = schema.find("pattern");
  const auto format = schema.find("format");
  if (pattern != schema.end()) {
    if (format != schema.end() || has_length) {
      fail(at, "'pattern' beside 'format', 'minLength' or 'maxLength' is unsupported");
    }
    return finish(at, pattern_string(pattern->get<std::string>(), at), false);
  }
  if (format != schema.end()) {
    const std::string& name = format->get_ref<const std::string&>();
    if (format_string_body(name).empty()) {
      fail(child(at, "format"), fmt::format("unsupported format '{}'", name));
    }
    if (has_length) fail(at, "'format' beside 'minLength' or 'maxLength' is unsupported");
    return finish(at, builtin("format-" + name), false);
  }
  if (!has_length) return finish(at, builtin("string"), false);
  const auto too_large = [](std::uint64_t n) { return n != unbounded && n > max_repeat_bound; };
  if (too_large(min_length) || too_large(max_length)) {
    fail(at, fmt::format("minLength or maxLength over {} is unsupported", max_repeat_bound));
  }
  // A short string is one DFA; a long one repeats the `char` rule rather than copy its DFA
  // once per character (past max_dfa_states).
  const std::uint64_t longest = max_length == unbounded ? min_length : max_length;
  const std::string one =
      longest <= max_inline_string_length ? gbnf_group(json_char_body()) : builtin("char");
  return finish(
      at, gbnf_sequence({quote_mark, gbnf_repeat(one, min_length, max_length), quote_mark}), false);
}

std::string converter::pattern_string(const std::string& pattern, const location& at) {
  expr content;
  try {
    content = as_json_text(pattern_language(pattern, budget_), 0);
  } catch (const grammar_error& e) {
    if (!e.limit.empty()) throw;  // the budget ran out: not the pattern's fault alone
    fail(child(at, "pattern"), fmt::format("invalid pattern: {}", e.what()));
  }
  return gbnf_sequence({quote_mark, "(" + to_gbnf(content) + ")", quote_mark});
}

}  // namespace courier::grammar::json_schema_detail
