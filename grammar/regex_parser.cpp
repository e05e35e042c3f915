#include "grammar/regex_parser.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "grammar/grammar_error.hpp"
#include "grammar/utf8_ranges.hpp"

namespace courier::grammar {

namespace {

using range_list = std::vector<code_point_range>;

// ECMAScript's character class escapes, and its LineTerminator (what `.` excludes: \n, \r and
// U+2028/U+2029, as every JSON Schema validator running on a JavaScript engine does).
const range_list digit_ranges{{'0', '9'}};
const range_list word_ranges{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
const range_list space_ranges{
    {0x09, 0x0D},     {0x20, 0x20},     {0xA0, 0xA0},     {0x1680, 0x1680}, {0x2000, 0x200A},
    {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
const range_list line_terminators{{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}};

struct set_escape {
  char32_t letter;
  const range_list* ranges;
  bool negated;
};
const set_escape set_escapes[] = {{'d', &digit_ranges, false}, {'D', &digit_ranges, true},
                                  {'w', &word_ranges, false},  {'W', &word_ranges, true},
                                  {'s', &space_ranges, false}, {'S', &space_ranges, true}};
const std::pair<char32_t, char32_t> control_escapes[] = {
    {'t', '\t'}, {'n', '\n'}, {'v', '\v'}, {'f', '\f'}, {'r', '\r'}};

bool is_digit(char32_t c) {
  return c >= '0' && c <= '9';
}
bool is_ascii_letter(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_ascii_alnum(char32_t c) {
  return is_digit(c) || is_ascii_letter(c);
}
int hex_value(char32_t c) {
  if (is_digit(c)) return static_cast<int>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<int>(c - 'a' + 10);
  if (c >= 'A' && c <= 'F') return static_cast<int>(c - 'A' + 10);
  return -1;
}
bool is_high_surrogate(char32_t c) {
  return c >= 0xD800 && c <= 0xDBFF;
}
bool is_low_surrogate(char32_t c) {
  return c >= 0xDC00 && c <= 0xDFFF;
}

// One escape or character inside or outside a class: a code point, or a set (\d, \W, ...).
struct class_atom {
  bool is_set = false;
  char32_t cp = 0;
  range_list set;  // normalized; a negated escape is already complemented
};

// A braced quantifier's shape, found before deciding whether `{` is one (ECMAScript's Annex B,
// which browsers and JSON Schema validators follow, reads a `{` that is not one as a literal).
struct braces {
  std::uint32_t min = 0;
  std::uint32_t max = 0;
  std::size_t end = 0;   // offset just past `}`
  bool too_big = false;  // a bound over max_repeat_bound
};

// One alternative of the top-level `|`, with the anchors that ECMAScript binds to it alone.
struct top_alternative {
  expr e;
  bool anchored_start = false;
  bool anchored_end = false;
  std::size_t offset = 0;  // where it begins in the pattern
};

// A group being parsed. The parser keeps them on an explicit stack (the pattern is untrusted),
// bounded by max_nesting.
struct group {
  std::size_t open = 0;  // offset of its `(`; 0 for the top level
  std::vector<expr> alternatives;
  std::vector<expr> items;  // the terms of the alternative being parsed
  // The top level only: each finished alternative's anchors, and the current one's.
  std::vector<top_alternative> top;
  bool anchored_start = false;
  bool anchored_end = false;
  std::size_t alternative_offset = 0;
};

class regex_parser {
 public:
  // Charges the pattern (its code points, and the literal bytes they become) here, and each
  // expression node as it is made.
  regex_parser(std::string_view pattern, compile_budget& budget) : budget_(budget) {
    budget.charge_work(pattern.size());
    budget.charge_memory(pattern.size() * (sizeof(char32_t) + 1));
    decode(pattern);
  }

  std::vector<top_alternative> parse() {
    std::vector<group> stack(1);
    while (pos_ < cps_.size()) {
      const std::size_t at = pos_;
      const char32_t c = cps_[pos_];
      group& g = stack.back();
      if (c == '|') {
        ++pos_;
        finish_alternative(g, stack.size() == 1);
        g.alternative_offset = pos_;
      } else if (c == '(') {
        if (stack.size() > static_cast<std::size_t>(max_nesting)) {
          fail(at, fmt::format("groups nested more than {} deep", max_nesting));
        }
        open_group();
        stack.emplace_back();
        stack.back().open = at;
      } else if (c == ')') {
        if (stack.size() == 1) fail(at, "unmatched )");
        ++pos_;
        finish_alternative(g, false);
        expr inner = expr::make_alternation(std::move(g.alternatives));
        stack.pop_back();
        add_term(stack.back(), quantified(std::move(inner)));
      } else if (c == '^') {
        if (stack.size() > 1 || !g.items.empty() || g.anchored_start) {
          fail(at, "^ is only supported at the start of the pattern or of a top-level alternative");
        }
        ++pos_;
        g.anchored_start = true;
      } else if (c == '$') {
        ++pos_;
        if (stack.size() > 1 || (pos_ < cps_.size() && cps_[pos_] != '|')) {
          fail(at, "$ is only supported at the end of the pattern or of a top-level alternative");
        }
        g.anchored_end = true;
      } else {
        add_term(g, quantified(parse_atom()));
      }
    }
    if (stack.size() > 1) fail(stack.back().open, "missing ) for this (");
    finish_alternative(stack.back(), true);
    return std::move(stack.back().top);
  }

 private:
  [[noreturn]] static void fail(std::size_t at, const std::string& what) {
    throw grammar_error(fmt::format("regex: offset {}: {}", at, what));
  }

  // Offsets in errors count code points, which is what a person reading the pattern counts.
  void decode(std::string_view pattern) {
    while (!pattern.empty()) {
      char32_t cp = 0;
      const std::size_t n = decode_utf8(pattern, cp);
      if (n == 0) fail(cps_.size(), "invalid UTF-8");
      cps_.push_back(cp);
      pattern.remove_prefix(n);
    }
  }

  bool peek_is(char32_t c, std::size_t offset = 0) const {
    return pos_ + offset < cps_.size() && cps_[pos_ + offset] == c;
  }

  void finish_alternative(group& g, bool top_level) {
    expr e = expr::make_sequence(std::move(g.items));
    g.items.clear();
    if (top_level) {
      g.top.push_back({std::move(e), g.anchored_start, g.anchored_end, g.alternative_offset});
      g.anchored_start = false;
      g.anchored_end = false;
    } else {
      g.alternatives.push_back(std::move(e));
    }
  }

  // Adjacent characters become one literal; an empty group adds nothing.
  void add_term(group& g, expr term) {
    if (term.k == expr::kind::empty) return;
    if (term.k == expr::kind::literal && !g.items.empty() &&
        g.items.back().k == expr::kind::literal) {
      g.items.back().text += term.text;
      return;
    }
    budget_.charge_memory(sizeof(expr));
    g.items.push_back(std::move(term));
  }

  // After `(`: the kinds of group ECMAScript has, and which of them are not regular.
  void open_group() {
    const std::size_t at = pos_++;
    if (!peek_is('?')) return;
    if (peek_is(':', 1)) {
      pos_ += 2;
    } else if (peek_is('=', 1)) {
      fail(at, "lookahead (?=...) is not supported");
    } else if (peek_is('!', 1)) {
      fail(at, "negative lookahead (?!...) is not supported");
    } else if (peek_is('<', 1) && peek_is('=', 2)) {
      fail(at, "lookbehind (?<=...) is not supported");
    } else if (peek_is('<', 1) && peek_is('!', 2)) {
      fail(at, "negative lookbehind (?<!...) is not supported");
    } else if (peek_is('<', 1)) {
      pos_ += 2;
      const std::size_t name_start = pos_;
      while (pos_ < cps_.size() && (is_ascii_alnum(cps_[pos_]) || cps_[pos_] == '_' ||
                                    cps_[pos_] == '$' || cps_[pos_] >= 0x80)) {
        ++pos_;
      }
      if (pos_ == name_start || is_digit(cps_[name_start]) || !peek_is('>')) {
        fail(at, "a named group needs a name and a closing >: (?<name>...)");
      }
      ++pos_;
    } else {
      fail(at, "group modifiers (?...) other than (?:...) and (?<name>...) are not supported");
    }
  }

  expr parse_atom() {
    const std::size_t at = pos_;
    const char32_t c = cps_[pos_];
    if (c == '*' || c == '+' || c == '?') {
      fail(at, fmt::format("nothing to repeat before {}", static_cast<char>(c)));
    }
    if (c == '{' && scan_braces()) fail(at, "nothing to repeat before {");
    if (c == '.') {
      ++pos_;
      return expr::make_class(line_terminators, true);
    }
    if (c == '[') return parse_class();
    class_atom a;
    if (c == '\\') {
      a = parse_escape(false);
    } else {
      a.cp = c;  // `]`, `}` and an unquantifying `{` are literals too (Annex B)
      ++pos_;
    }
    if (a.is_set) return expr::make_class(std::move(a.set));
    std::string bytes;
    append_utf8(bytes, a.cp);
    return expr::make_literal(std::move(bytes));
  }

  // `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}`, each maybe lazy (irrelevant to the language).
  expr quantified(expr item) {
    if (pos_ >= cps_.size()) return item;
    const std::size_t at = pos_;
    std::uint32_t min = 0;
    std::uint32_t max = 0;
    const char32_t c = cps_[pos_];
    if (c == '*' || c == '+' || c == '?') {
      min = c == '+' ? 1 : 0;
      max = c == '?' ? 1 : expr::unbounded;
      ++pos_;
    } else if (c == '{' && scan_braces()) {
      const braces b = *scan_braces();
      if (b.too_big) fail(at, fmt::format("repeat bound over {}", max_repeat_bound));
      if (b.max < b.min) fail(at, fmt::format("{{{},{}}}: numbers out of order", b.min, b.max));
      min = b.min;
      max = b.max;
      pos_ = b.end;
    } else {
      return item;
    }
    if (peek_is('?')) ++pos_;
    if (peek_is('*') || peek_is('+') || peek_is('?') || (peek_is('{') && scan_braces())) {
      fail(pos_, "nothing to repeat: a quantifier follows a quantifier");
    }
    return expr::make_repeat(std::move(item), min, max);
  }

  std::optional<braces> scan_braces() const {
    braces b;
    std::size_t p = pos_ + 1;
    const auto number = [&](std::uint32_t& out) {
      const std::size_t start = p;
      std::uint64_t v = 0;
      for (; p < cps_.size() && is_digit(cps_[p]); ++p) {
        if (v <= max_repeat_bound) v = v * 10 + (cps_[p] - '0');
      }
      if (v > max_repeat_bound) b.too_big = true;
      out = static_cast<std::uint32_t>(v > max_repeat_bound ? max_repeat_bound : v);
      return p > start;
    };
    if (!number(b.min)) return std::nullopt;
    b.max = b.min;
    if (p < cps_.size() && cps_[p] == ',') {
      ++p;
      if (!number(b.max)) b.max = expr::unbounded;
    }
    if (p >= cps_.size() || cps_[p] != '}') return std::nullopt;
    b.end = p + 1;
    return b;
  }

  expr parse_class() {
    const std::size_t open = pos_++;
    const bool negated = peek_is('^');
    if (negated) ++pos_;
    range_list ranges;
    const auto add = [&ranges](const class_atom& a) {
      if (a.is_set) {
        ranges.insert(ranges.end(), a.set.begin(), a.set.end());
      } else {
        ranges.push_back({a.cp, a.cp});
      }
    };
    while (true) {
      if (pos_ >= cps_.size()) fail(open, "missing ] for this [");
      if (peek_is(']')) break;
      const std::size_t first_at = pos_;
      const class_atom first = parse_class_atom();
      if (!peek_is('-') || pos_ + 1 >= cps_.size() || peek_is(']', 1)) {
        add(first);
        continue;
      }
      ++pos_;
      const class_atom last = parse_class_atom();
      if (first.is_set || last.is_set) {
        // Annex B: `[\w-.]` is \w, `-` and `.`.
        add(first);
        add(class_atom{false, '-', {}});
        add(last);
      } else if (last.cp < first.cp) {
        fail(first_at, "class range out of order");
      } else {
        ranges.push_back({first.cp, last.cp});
      }
    }
    ++pos_;
    expr e = expr::make_class(std::move(ranges), negated);
    // `[]` and the like are valid ECMAScript, but GBNF cannot write them: refuse them here,
    // where the error can say where.
    if (e.ranges.empty()) fail(open, "a class that matches nothing is not supported");
    return e;
  }

  class_atom parse_class_atom() {
    if (peek_is('\\')) return parse_escape(true);
    return class_atom{false, cps_[pos_++], {}};
  }

  class_atom parse_escape(bool in_class) {
    const std::size_t at = pos_++;
    if (pos_ >= cps_.size()) fail(at, "\\ at the end of the pattern");
    const char32_t c = cps_[pos_++];
    for (const set_escape& e : set_escapes) {
      if (e.letter == c) return class_atom{true, 0, normalize_ranges(*e.ranges, e.negated)};
    }
    for (const auto& [letter, cp] : control_escapes) {
      if (letter == c) return class_atom{false, cp, {}};
    }
    switch (c) {
      case 'b':
        if (in_class) return class_atom{false, '\b', {}};
        fail(at, "word boundary \\b is not supported");
      case 'B':
        fail(at, "word boundary \\B is not supported");
      case 'k':
        fail(at, "backreference \\k<name> is not supported");
      case 'p':
      case 'P':
        fail(at, "Unicode property escapes \\p{...} and \\P{...} are not supported");
      case 'x':
        return class_atom{false, parse_hex_digits(at, 2), {}};
      case 'u':
        return class_atom{false, parse_unicode_escape(at), {}};
      case 'c': {
        const char32_t letter = pos_ < cps_.size() ? cps_[pos_] : 0;
        if (!is_ascii_letter(letter)) fail(at, "\\c needs a letter");
        ++pos_;
        return class_atom{false, letter % 32, {}};
      }
      case '0':
        if (!(pos_ < cps_.size() && is_digit(cps_[pos_]))) return class_atom{false, 0, {}};
        fail(at, "octal escapes are not supported");
      default:
        break;
    }
    if (is_digit(c)) {
      fail(at, in_class ? "octal escapes are not supported"
                        : fmt::format("backreference \\{} is not supported", static_cast<char>(c)));
    }
    // Escaped punctuation stands for itself; an escaped letter that ECMAScript does not define
    // is refused rather than read as the letter (\A, \Z, \h elsewhere mean something else).
    if (is_ascii_alnum(c)) fail(at, fmt::format("unknown escape \\{}", static_cast<char>(c)));
    return class_atom{false, c, {}};
  }

  char32_t parse_hex_digits(std::size_t at, int digits) {
    char32_t v = 0;
    for (int i = 0; i < digits; ++i, ++pos_) {
      const int h = pos_ < cps_.size() ? hex_value(cps_[pos_]) : -1;
      if (h < 0) {
        fail(at, fmt::format("\\{} needs {} hex digits", static_cast<char>(cps_[at + 1]), digits));
      }
      v = v * 16 + static_cast<char32_t>(h);
    }
    return v;
  }

  // \uHHHH (a surrogate pair of two of them is one code point) or \u{H...}.
  char32_t parse_unicode_escape(std::size_t at) {
    char32_t cp = 0;
    if (peek_is('{')) {
      ++pos_;
      const std::size_t start = pos_;
      for (; pos_ < cps_.size() && hex_value(cps_[pos_]) >= 0; ++pos_) {
        if (cp <= 0x10FFFF) cp = cp * 16 + static_cast<char32_t>(hex_value(cps_[pos_]));
      }
      if (pos_ == start || !peek_is('}')) fail(at, "\\u{...} needs hex digits and a }");
      ++pos_;
      if (cp > 0x10FFFF) fail(at, "\\u{...} is past U+10FFFF");
    } else {
      cp = parse_hex_digits(at, 4);
      if (is_high_surrogate(cp) && peek_is('\\') && peek_is('u', 1)) {
        const std::size_t saved = pos_;
        pos_ += 2;
        const char32_t low = parse_hex_digits(pos_ - 2, 4);
        if (is_low_surrogate(low)) return 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        pos_ = saved;
      }
    }
    if (cp >= 0xD800 && cp <= 0xDFFF) {
      fail(at, "a lone surrogate cannot be matched in UTF-8 text");
    }
    return cp;
  }

  compile_budget& budget_;
  std::vector<char32_t> cps_;
  std::size_t pos_ = 0;
};

expr any_text() {
  return expr::make_repeat(expr::make_any_char(), 0, expr::unbounded);
}

// `e` with what search semantics lets come before and after it.
expr in_context(expr e, bool anchored_start, bool anchored_end) {
  std::vector<expr> items;
  if (!anchored_start) items.push_back(any_text());
  if (e.k != expr::kind::empty) items.push_back(std::move(e));
  if (!anchored_end && !(items.size() == 1 && !anchored_start)) items.push_back(any_text());
  return expr::make_sequence(std::move(items));
}

// The first top-level alternative anchored unlike the first one, or null.
const top_alternative* unlike_anchored(const std::vector<top_alternative>& alts) {
  for (const top_alternative& a : alts) {
    if (a.anchored_start != alts[0].anchored_start || a.anchored_end != alts[0].anchored_end) {
      return &a;
    }
  }
  return nullptr;
}

expr alternation_of(std::vector<top_alternative> alts) {
  std::vector<expr> items;
  for (top_alternative& a : alts) items.push_back(std::move(a.e));
  return expr::make_alternation(std::move(items));
}

}  // namespace

parsed_regex parse_regex(std::string_view pattern, const compile_limits& limits) {
  compile_budget budget(limits);
  return parse_regex(pattern, budget);
}

parsed_regex parse_regex(std::string_view pattern, compile_budget& budget) {
  std::vector<top_alternative> alts = regex_parser(pattern, budget).parse();
  // `^a|b$` anchors each alternative alone, which one pair of flags cannot say;
  // pattern_language handles it.
  if (const top_alternative* odd = unlike_anchored(alts)) {
    throw grammar_error(fmt::format(
        "regex: offset {}: ^ and $ must anchor every top-level alternative alike", odd->offset));
  }
  parsed_regex out;
  out.anchored_start = alts[0].anchored_start;
  out.anchored_end = alts[0].anchored_end;
  out.e = alternation_of(std::move(alts));
  return out;
}

expr pattern_language(std::string_view pattern, const compile_limits& limits) {
  compile_budget budget(limits);
  return pattern_language(pattern, budget);
}

expr pattern_language(std::string_view pattern, compile_budget& budget) {
  std::vector<top_alternative> alts = regex_parser(pattern, budget).parse();
  if (unlike_anchored(alts) == nullptr) {
    const bool start = alts[0].anchored_start;
    const bool end = alts[0].anchored_end;
    return in_context(alternation_of(std::move(alts)), start, end);
  }
  std::vector<expr> items;
  for (top_alternative& a : alts) {
    items.push_back(in_context(std::move(a.e), a.anchored_start, a.anchored_end));
  }
  return expr::make_alternation(std::move(items));
}

}  // namespace courier::grammar
