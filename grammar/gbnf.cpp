#include "grammar/gbnf.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <utility>

#include "grammar/grammar_error.hpp"
#include "grammar/utf8_ranges.hpp"

namespace courier::grammar {

bool is_gbnf_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

namespace {

// A recursive-descent parser over the whole text. Nesting is bounded by max_nesting: each
// parenthesized group costs one level.
class parser {
 public:
  parser(std::string_view text, compile_budget& budget) : s_(text), budget_(budget) {
    budget_.charge_work(text.size());
    budget_.charge_memory(text.size());
  }

  std::vector<gbnf_rule> parse() {
    std::vector<gbnf_rule> rules;
    skip_space(true);
    while (pos_ < s_.size()) {
      const std::size_t name_at = pos_;
      std::string name = parse_name();
      if (name.empty()) fail(name_at, "expected a rule name");
      skip_space(false);
      if (s_.substr(pos_, 3) != "::=") fail(pos_, fmt::format("expected '::=' after '{}'", name));
      pos_ += 3;
      skip_space(false);
      expr body = parse_alternatives(false, 0);
      if (pos_ < s_.size() && s_[pos_] != '\n' && s_[pos_] != '\r') {
        fail(pos_, fmt::format("unexpected '{}'", s_[pos_]));
      }
      rules.push_back({std::move(name), std::move(body)});
      skip_space(true);
    }
    if (rules.empty()) fail(0, "no rules");
    return rules;
  }

 private:
  [[noreturn]] void fail(std::size_t at, const std::string& what) const {
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i < at && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw grammar_error(fmt::format("grammar: line {}, column {}: {}", line, column, what));
  }

  // Spaces, tabs and comments; newlines too when `newlines`.
  void skip_space(bool newlines) {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == ' ' || c == '\t' || (newlines && (c == '\n' || c == '\r'))) {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n' && s_[pos_] != '\r') ++pos_;
      } else {
        break;
      }
    }
  }

  std::string parse_name() {
    const std::size_t start = pos_;
    while (pos_ < s_.size() && is_gbnf_name_char(s_[pos_])) ++pos_;
    return std::string(s_.substr(start, pos_ - start));
  }

  // Alternatives up to ')' (nested) or the end of the line (top level).
  expr parse_alternatives(bool nested, int depth) {
    std::vector<expr> alts;
    alts.push_back(parse_sequence(nested, depth));
    while (pos_ < s_.size() && s_[pos_] == '|') {
      ++pos_;
      skip_space(true);
      alts.push_back(parse_sequence(nested, depth));
    }
    return expr::make_alternation(std::move(alts));
  }

  expr parse_sequence(bool nested, int depth) {
    std::vector<expr> items;
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == '|' || c == ')' || c == '\n' || c == '\r') break;
      // A new rule on the next line ends this one; inside parentheses lines run on.
      items.push_back(parse_quantified(depth));
      skip_space(nested);
    }
    return expr::make_sequence(std::move(items));
  }

  expr parse_quantified(int depth) { return parse_postfix(parse_primary(depth)); }

  // The quantifiers after a primary (`*`, `+`, `?`, `{m,n}`), out of line like parse_atom.
  [[gnu::noinline]] expr parse_postfix(expr e) {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      budget_.charge_memory(sizeof(expr));
      if (c == '*') {
        e = expr::make_repeat(std::move(e), 0, expr::unbounded);
      } else if (c == '+') {
        e = expr::make_repeat(std::move(e), 1, expr::unbounded);
      } else if (c == '?') {
        e = expr::make_repeat(std::move(e), 0, 1);
      } else if (c == '{') {
        e = parse_braces(std::move(e));
        continue;
      } else {
        break;
      }
      ++pos_;
    }
    return e;
  }

  std::uint32_t parse_bound() {
    const std::size_t start = pos_;
    std::uint64_t n = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      n = n * 10 + static_cast<std::uint64_t>(s_[pos_] - '0');
      if (n > max_repeat_bound) fail(start, fmt::format("repeat bound over {}", max_repeat_bound));
      ++pos_;
    }
    if (pos_ == start) fail(pos_, "expected a number in {}");
    return static_cast<std::uint32_t>(n);
  }

  [[gnu::noinline]] expr parse_braces(expr e) {
    const std::size_t open = pos_++;
    skip_space(false);
    const std::uint32_t min = parse_bound();
    skip_space(false);
    std::uint32_t max = min;
    if (pos_ < s_.size() && s_[pos_] == ',') {
      ++pos_;
      skip_space(false);
      max = (pos_ < s_.size() && s_[pos_] == '}') ? expr::unbounded : parse_bound();
      skip_space(false);
    }
    if (pos_ >= s_.size() || s_[pos_] != '}') fail(open, "unterminated {m,n}");
    ++pos_;
    if (max < min) fail(open, fmt::format("{{{},{}}}: the maximum is below the minimum", min, max));
    return expr::make_repeat(std::move(e), min, max);
  }

  // The recursion (a group: `(` alternatives `)`) is all that stays in the recursive frames;
  // everything else is out of line, so that max_nesting groups fit in a small stack (the fuzz
  // targets' 512 KiB under ASan, tests/fuzz/README.md).
  expr parse_primary(int depth) {
    budget_.charge_memory(sizeof(expr));
    if (s_[pos_] != '(') return parse_atom();
    if (depth + 1 > max_nesting) fail_nesting();
    const std::size_t open = pos_++;
    skip_space(true);
    expr inner = parse_alternatives(true, depth + 1);
    if (pos_ >= s_.size() || s_[pos_] != ')') fail_unclosed(open);
    ++pos_;
    return inner;
  }

  // A literal, a class, any character, or a rule's name.
  [[gnu::noinline]] expr parse_atom() {
    const char c = s_[pos_];
    if (c == '"') return parse_literal();
    if (c == '[') return parse_class();
    if (c == '.') {
      ++pos_;
      return expr::make_any_char();
    }
    if (is_gbnf_name_char(c)) {
      std::string name = parse_name();
      return expr::make_ref(std::move(name));
    }
    fail(pos_, fmt::format("unexpected '{}'", c));
  }

  [[noreturn]] [[gnu::noinline]] void fail_nesting() {
    fail(pos_, fmt::format("groups nested over {} deep", max_nesting));
  }
  [[noreturn]] [[gnu::noinline]] void fail_unclosed(std::size_t open) {
    fail(open, "unclosed '('");
  }

  // One character of a literal or class: an escape or a UTF-8 code point.
  char32_t parse_char() {
    const std::size_t at = pos_;
    if (s_[pos_] != '\\') {
      char32_t cp = 0;
      const std::size_t n = decode_utf8(s_.substr(pos_), cp);
      if (n == 0) fail(at, "invalid UTF-8");
      pos_ += n;
      return cp;
    }
    if (++pos_ >= s_.size()) fail(at, "unterminated escape");
    const char e = s_[pos_++];
    switch (e) {
      case 'n': return '\n';
      case 'r': return '\r';
      case 't': return '\t';
      case 'x': return parse_hex(at, 2);
      case 'u': return parse_hex(at, 4);
      case 'U': return parse_hex(at, 8);
      default:
        // Escaped punctuation stands for itself (\- \^ \] \[ ...); letters and digits
        // are reserved for escapes.
        if (static_cast<unsigned char>(e) < 0x80 &&
            (!is_gbnf_name_char(e) || e == '-' || e == '_')) {
          return static_cast<char32_t>(e);
        }
        fail(at, fmt::format("unknown escape '\\{}'", e));
    }
  }

  char32_t parse_hex(std::size_t at, int digits) {
    std::uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      if (pos_ >= s_.size()) fail(at, "short hex escape");
      const char h = s_[pos_++];
      int d = -1;
      if (h >= '0' && h <= '9') d = h - '0';
      if (h >= 'a' && h <= 'f') d = h - 'a' + 10;
      if (h >= 'A' && h <= 'F') d = h - 'A' + 10;
      if (d < 0) fail(at, "bad hex digit in escape");
      v = v * 16 + static_cast<std::uint32_t>(d);
    }
    if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) fail(at, "escape is not a code point");
    return static_cast<char32_t>(v);
  }

  expr parse_literal() {
    const std::size_t open = pos_++;
    std::string bytes;
    while (true) {
      if (pos_ >= s_.size() || s_[pos_] == '\n' || s_[pos_] == '\r') fail(open, "unterminated string");
      if (s_[pos_] == '"') break;
      append_utf8(bytes, parse_char());
    }
    ++pos_;
    return expr::make_literal(std::move(bytes));
  }

  expr parse_class() {
    const std::size_t open = pos_++;
    bool negated = false;
    if (pos_ < s_.size() && s_[pos_] == '^') {
      negated = true;
      ++pos_;
    }
    std::vector<code_point_range> ranges;
    while (true) {
      if (pos_ >= s_.size() || s_[pos_] == '\n' || s_[pos_] == '\r') fail(open, "unterminated [");
      if (s_[pos_] == ']') break;
      const char32_t first = parse_char();
      char32_t last = first;
      if (pos_ + 1 < s_.size() && s_[pos_] == '-' && s_[pos_ + 1] != ']') {
        ++pos_;
        last = parse_char();
        if (last < first) fail(open, "a class range runs backwards");
      }
      ranges.push_back({first, last});
    }
    ++pos_;
    return expr::make_class(std::move(ranges), negated);
  }

  std::string_view s_;
  compile_budget& budget_;
  std::size_t pos_ = 0;
};

}  // namespace

std::vector<gbnf_rule> parse_gbnf(std::string_view text, compile_budget& budget) {
  return parser(text, budget).parse();
}

std::vector<gbnf_rule> parse_gbnf(std::string_view text, const compile_limits& limits) {
  compile_budget budget(limits);
  return parse_gbnf(text, budget);
}

}  // namespace courier::grammar
