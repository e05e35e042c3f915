#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "grammar/compiled_grammar.hpp"
#include "grammar/expr.hpp"
#include "grammar/gbnf.hpp"
#include "grammar/grammar_error.hpp"
#include "grammar/matcher.hpp"
#include "grammar/regex_parser.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_grammar_expr_gbnf {

using courier::grammar::code_point_range;
using courier::grammar::expr;
using courier::grammar::grammar_error;
using courier::grammar::to_gbnf;

namespace {

expr lit(const std::string& s) {
  return expr::make_literal(s);
}
expr rule(const std::string& s) {
  return expr::make_ref(s);
}
expr cls(std::vector<code_point_range> ranges) {
  return expr::make_class(std::move(ranges));
}
expr rep(expr e, std::uint32_t min, std::uint32_t max) {
  return expr::make_repeat(std::move(e), min, max);
}
expr seq(std::vector<expr> items) {
  return expr::make_sequence(std::move(items));
}
expr alt(std::vector<expr> items) {
  return expr::make_alternation(std::move(items));
}
constexpr std::uint32_t inf = expr::unbounded;

}  // namespace

TEST_CASE("to_gbnf: a literal is quoted with GBNF's escapes and raw UTF-8", "[grammar]") {
  CHECK(to_gbnf(lit("abc")) == R"("abc")");
  CHECK(to_gbnf(lit("a\"b\\c\n\r\t")) == R"("a\"b\\c\n\r\t")");
  CHECK(to_gbnf(lit(std::string("\x01\x1F\x7F", 3))) == R"("\x01\x1F\x7F")");
  CHECK(to_gbnf(lit(std::string(1, '\0'))) == R"("\x00")");
  CHECK(to_gbnf(lit("h\xC3\xA9 \xF0\x9F\x98\x80")) == "\"h\xC3\xA9 \xF0\x9F\x98\x80\"");
  CHECK(to_gbnf(expr::make_empty()) == R"("")");
}

TEST_CASE("to_gbnf: a literal that is not UTF-8 is refused", "[grammar]") {
  CHECK_THROWS_WITH(to_gbnf(lit("a\xFF")), "to_gbnf: a literal holds invalid UTF-8 at byte 1");
  CHECK_THROWS_WITH(to_gbnf(lit("ab\xC3")), "to_gbnf: a literal holds invalid UTF-8 at byte 2");
}

TEST_CASE("to_gbnf: a class escapes what is special in brackets and everything not ASCII",
          "[grammar]") {
  CHECK(to_gbnf(cls({{'a', 'c'}, {'x', 'x'}})) == "[a-cx]");
  // llama.cpp's GBNF escapes only \\ \" \[ \]: `-` and `^` are written in hex.
  CHECK(to_gbnf(cls({{'-', '-'}, {'[', '^'}})) == R"([\x2D\[-\x5E])");
  CHECK(to_gbnf(cls({{'"', '"'}, {'a', 'a'}})) == R"(["a])");
  CHECK(to_gbnf(cls({{0, 0x1F}})) == R"([\x00-\x1F])");
  CHECK(to_gbnf(cls({{'\t', '\t'}, {'\r', '\r'}})) == R"([\t\r])");
  CHECK(to_gbnf(cls({{'\n', '\n'}})) == R"([\n])");
  CHECK(to_gbnf(cls({{0x7F, 0xE9}})) == R"([\x7F-\u00E9])");
  CHECK(to_gbnf(cls({{0x1F600, 0x10FFFF}})) == R"([\U0001F600-\U0010FFFF])");
}

TEST_CASE("to_gbnf: a class is printed negated when that is shorter, and all of it as a dot",
          "[grammar]") {
  CHECK(to_gbnf(expr::make_class({{'"', '"'}, {'\\', '\\'}}, true)) == R"([^"\\])");
  CHECK(to_gbnf(expr::make_class({{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}, true)) ==
        R"([^\n\r\u2028-\u2029])");
  CHECK(to_gbnf(expr::make_any_char()) == ".");
  // Everything but the astral planes: the complement is one range, printed with the surrogates
  // left out of both sides.
  CHECK(to_gbnf(cls({{0, 0xFFFF}})) == R"([^\U00010000-\U0010FFFF])");
}

TEST_CASE("to_gbnf: what matches nothing has no GBNF form and is refused", "[grammar]") {
  CHECK_THROWS_WITH(to_gbnf(cls({})), "to_gbnf: a class that matches nothing has no GBNF form");
  CHECK_THROWS_WITH(to_gbnf(seq({lit("a"), alt({})})),
                    "to_gbnf: an alternation without alternatives has no GBNF form");
}

TEST_CASE("to_gbnf: a rule reference is its name, which must be a GBNF name", "[grammar]") {
  CHECK(to_gbnf(rule("json-value_2")) == "json-value_2");
  CHECK_THROWS_WITH(to_gbnf(rule("a b")), "to_gbnf: 'a b' is not a GBNF rule name");
  CHECK_THROWS_WITH(to_gbnf(rule("")), "to_gbnf: a rule reference without a name");
}

TEST_CASE("to_gbnf: sequences juxtapose and alternations are parenthesized inside them",
          "[grammar]") {
  CHECK(to_gbnf(seq({lit("a"), rule("x"), cls({{'0', '9'}})})) == R"("a" x [0-9])");
  CHECK(to_gbnf(alt({lit("a"), rule("x"), expr::make_empty()})) == R"("a" | x | "")");
  CHECK(to_gbnf(seq({alt({lit("a"), lit("b")}), lit("c")})) == R"(("a" | "b") "c")");
  CHECK(to_gbnf(seq({lit("a"), seq({rule("x"), rule("y")})})) == R"("a" x y)");
  CHECK(to_gbnf(alt({lit("a"), alt({rule("x"), rule("y")})})) == R"("a" | x | y)");
}

TEST_CASE("to_gbnf: repeats use the shortest operator and parenthesize compound operands",
          "[grammar]") {
  CHECK(to_gbnf(rep(lit("ab"), 0, inf)) == R"("ab"*)");
  CHECK(to_gbnf(rep(rule("x"), 1, inf)) == "x+");
  CHECK(to_gbnf(rep(rule("x"), 0, 1)) == "x?");
  CHECK(to_gbnf(rep(rule("x"), 3, 3)) == "x{3}");
  CHECK(to_gbnf(rep(rule("x"), 0, 0)) == "x{0}");
  CHECK(to_gbnf(rep(rule("x"), 2, inf)) == "x{2,}");
  CHECK(to_gbnf(rep(rule("x"), 2, 5)) == "x{2,5}");
  CHECK(to_gbnf(rep(rule("x"), 0, 5)) == "x{0,5}");
  CHECK(to_gbnf(rep(seq({lit("a"), rule("x")}), 0, inf)) == R"(("a" x)*)");
  CHECK(to_gbnf(rep(alt({lit("a"), rule("x")}), 1, inf)) == R"(("a" | x)+)");
  CHECK(to_gbnf(rep(rep(lit("a"), 0, 1), 1, inf)) == R"(("a"?)+)");
  CHECK(to_gbnf(seq({rep(lit("a"), 0, 1), rule("x")})) == R"("a"? x)");
}

TEST_CASE("to_gbnf: a tree deeper than the parsers allow is refused, not a stack overflow",
          "[grammar]") {
  expr e = lit("a");
  for (int i = 0; i < 20 * courier::grammar::max_nesting; ++i) e = rep(std::move(e), 0, 1);
  CHECK_THROWS_AS(to_gbnf(e), grammar_error);
}

namespace {

// Adds `x` to a sequence's items, joining it to a literal before it.
void append_to_sequence(std::vector<expr>& items, expr x) {
  if (x.k == expr::kind::empty) return;
  if (x.k == expr::kind::literal && !items.empty() && items.back().k == expr::kind::literal) {
    items.back().text += x.text;
  } else {
    items.push_back(std::move(x));
  }
}

// The tree up to what printing and parsing may change: nested sequences and alternations
// flattened, empties dropped from sequences, adjacent literals joined, classes normalized.
expr canonical(const expr& e) {
  if (e.k == expr::kind::sequence || e.k == expr::kind::alternation) {
    const bool is_sequence = e.k == expr::kind::sequence;
    std::vector<expr> items;
    for (const expr& c : e.children) {
      expr x = canonical(c);
      std::vector<expr> parts;
      if (x.k == e.k) {
        parts = std::move(x.children);
      } else {
        parts.push_back(std::move(x));
      }
      for (expr& part : parts) {
        if (is_sequence) {
          append_to_sequence(items, std::move(part));
        } else {
          items.push_back(std::move(part));
        }
      }
    }
    return is_sequence ? seq(std::move(items)) : alt(std::move(items));
  }
  if (e.k == expr::kind::repeat) return rep(canonical(e.children.at(0)), e.min, e.max);
  if (e.k == expr::kind::char_class) return cls(e.ranges);
  return e;
}

bool same(const expr& a, const expr& b) {
  if (a.k != b.k || a.text != b.text || a.min != b.min || a.max != b.max ||
      a.ranges.size() != b.ranges.size() || a.children.size() != b.children.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.ranges.size(); ++i) {
    if (a.ranges[i].first != b.ranges[i].first || a.ranges[i].last != b.ranges[i].last) {
      return false;
    }
  }
  for (std::size_t i = 0; i < a.children.size(); ++i) {
    if (!same(a.children[i], b.children[i])) return false;
  }
  return true;
}

// Random trees over what GBNF can hold, with the characters printing must escape.
class random_exprs {
 public:
  explicit random_exprs(std::uint32_t seed) : rng_(seed) {}

  expr make(int depth) {
    switch (pick(depth >= 4 ? 4 : 8)) {
      case 0:
        return expr::make_empty();
      case 1:
        return lit(literal());
      case 2:
        return expr::make_class(ranges(), pick(3) == 0);
      case 3:
        return rule(pick_of(std::vector<std::string>{"a", "b-c", "x_1", "root"}));
      case 4:
        return seq(children(depth, 2));
      case 5:
        return alt(children(depth, 2));
      default: {
        const std::uint32_t min = pick(4);
        const std::uint32_t max = pick_of(std::vector<std::uint32_t>{min, min + 3, inf});
        return rep(make(depth + 1), min, max);
      }
    }
  }

 private:
  std::uint32_t pick(std::uint32_t n) {
    return std::uniform_int_distribution<std::uint32_t>(0, n - 1)(rng_);
  }
  template <typename T>
  T pick_of(const std::vector<T>& v) {
    return v[pick(static_cast<std::uint32_t>(v.size()))];
  }

  std::vector<expr> children(int depth, std::uint32_t min) {
    std::vector<expr> out;
    for (std::uint32_t i = 0, n = min + pick(3); i < n; ++i) out.push_back(make(depth + 1));
    return out;
  }

  std::string literal() {
    const std::vector<std::string> pieces{"a",           "Z",        " ",
                                          "\"",          "\\",       "\n",
                                          "\r",          "\t",       std::string(1, '\0'),
                                          "\x01",        "\x7F",     "#",
                                          "|",           "\xC3\xA9", "\xF0\x9F\x98\x80",
                                          "\xE2\x80\xA8"};
    std::string out;
    for (std::uint32_t i = 0, n = 1 + pick(4); i < n; ++i) out += pick_of(pieces);
    return out;
  }

  std::vector<code_point_range> ranges() {
    const std::vector<char32_t> starts{0,      '\t',   '\n',   ' ',    '-',     '[',
                                       '\\',   ']',    '^',    'a',    0x7F,    0xE9,
                                       0x2028, 0xD7FF, 0xE000, 0xFFFF, 0x1F600, 0x10FFFF};
    std::vector<code_point_range> out;
    for (std::uint32_t i = 0, n = 1 + pick(3); i < n; ++i) {
      const char32_t first = pick_of(starts);
      out.push_back({first, std::min<char32_t>(first + pick(3) * pick(40), 0x10FFFF)});
    }
    return out;
  }

  std::mt19937 rng_;
};

}  // namespace

TEST_CASE("to_gbnf: parse_gbnf reads a random tree's text back to the same tree", "[grammar]") {
  random_exprs gen(20240611);
  for (int i = 0; i < 3000; ++i) {
    const expr e = gen.make(0);
    const std::string text = "root ::= " + to_gbnf(e);
    INFO(text);
    const std::vector<courier::grammar::gbnf_rule> rules = courier::grammar::parse_gbnf(text);
    REQUIRE(rules.size() == 1);
    CHECK(rules[0].name == "root");
    CHECK(same(canonical(rules[0].body), canonical(e)));
  }
}

namespace {

// A pattern, the characters its test strings are made of, and longer strings worth trying.
struct regex_case {
  std::string pattern;
  std::string alphabet;
  std::vector<std::string> extra = {};
};

// Every string over `alphabet` up to the longest length that keeps them under ~4000, and
// random longer ones: enough to walk each pattern's automaton through its loops.
std::vector<std::string> test_strings(const regex_case& c, std::mt19937& rng) {
  std::vector<std::string> out{""};
  for (std::size_t begin = 0, length = 0; out.size() * c.alphabet.size() < 4000 && length < 10;
       ++length) {
    const std::size_t end = out.size();
    for (std::size_t i = begin; i < end; ++i) {
      for (char a : c.alphabet) out.push_back(out[i] + a);
    }
    begin = end;
  }
  std::uniform_int_distribution<std::size_t> letter(0, c.alphabet.size() - 1);
  for (int i = 0; i < 300; ++i) {
    std::string s;
    for (int n = 5 + i % 10; n > 0; --n) s += c.alphabet[letter(rng)];
    out.push_back(s);
  }
  out.insert(out.end(), c.extra.begin(), c.extra.end());
  return out;
}

// The strings on which the compiled `e` and std::regex disagree; `search` compares with
// ECMAScript's search (a JSON Schema pattern) instead of a full match.
std::vector<std::string> disagreements(const regex_case& c, const expr& e, bool search) {
  const auto g = courier::grammar::compile_gbnf("root ::= " + to_gbnf(e));
  const std::regex reference(c.pattern, std::regex::ECMAScript);
  std::mt19937 rng(7);
  std::vector<std::string> out;
  for (const std::string& s : test_strings(c, rng)) {
    const bool expected = search ? std::regex_search(s, reference) : std::regex_match(s, reference);
    if (courier::grammar::full_match(g, s) != expected) out.push_back(s);
  }
  return out;
}

const std::vector<regex_case> regex_cases{
    {"", "a"},
    {"abc", "abcx"},
    {"a|b|", "abc"},
    {"(ab)*c", "abc"},
    {"a{2,3}", "ab"},
    {"a{2,}b", "ab"},
    {"a{0}b", "ab"},
    {"(a|b){2}", "abc"},
    {"[a-c]+", "abcd"},
    {"[^a-c]*", "abcd\n"},
    {"\\d+", "0a9-"},
    {"\\D\\d", "0a9-"},
    {"\\w+\\s?", "a_0 -\t"},
    {"\\W", "a_0 -\t\n"},
    {"[\\w.-]+@[a-z]+\\.com", "a.-@", {"a@b.com", "a.b-c@xy.com", "@b.com", "a@b.co", "a@.com"}},
    {".*", "a\n\r"},
    {"a.b", "ab\n\r."},
    {"x?y?z?", "xyz"},
    {"(a|bc)*d", "abcd"},
    {"(?:ab|a)(?:bc|c)", "abc"},
    {"[\\]\\-^]+", "]-^a\\"},
    {"\\(\\)\\[\\]\\{\\}\\.\\*", "()[]{}.*", {"()[]{}.*", "()[]{}.", "()[]{}.**", "()[]{}a*"}},
    {"a{2}b{0,2}", "ab"},
    {"(a*)*b", "ab"},
    {"((a|b)c?){1,3}", "abc"},
    {"\\s*", " \t\n\v\f\ra"},
    {"[\\s\\S]", "a\n "},
    {"[^\\s]+", "a \n"},
    {"[\\D][^\\W]", "1a_-"},
    {"^ab$", "ab"},
    {"^(a|b)+$", "abc"},
    {"^ab", "abc"},
    {"ab$", "abc"},
    {"-?\\d+(\\.\\d+)?", "-1.a0"},
    {"[0-9]{3}-[0-9]{4}", "5-", {"555-1234", "55-1234", "555-12345", "5551234"}},
    {"\\x41\\u0042\\t\\n\\\\", "AB\t\n\\"},
    {"a{1,2}?b", "ab"},
    {"(a|ab)(c|bcd)(d*)", "abcd"},
    {"(\"([^\"\\\\]|\\\\.)*\")", "\"\\a"},
    {"((((((a))))))|b", "ab"},
    {"(a|b)*abb", "ab"},
    {"\\d{2,4}", "1a"},
    {"^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}$",
     "a@.%",
     {"a@b.cd", "x.y%z+w-v@q-r.st", "a@b.c", "@b.cd", "a@b.c1", "a b@c.de"}},
};

}  // namespace

TEST_CASE("regex to gbnf: a compiled regex fully matches what std::regex matches", "[grammar]") {
  for (const regex_case& c : regex_cases) {
    INFO("pattern: " << c.pattern);
    const courier::grammar::parsed_regex parsed = courier::grammar::parse_regex(c.pattern);
    const std::string text = "root ::= " + to_gbnf(parsed.e);
    INFO(text);
    CHECK(same(canonical(courier::grammar::parse_gbnf(text).at(0).body), canonical(parsed.e)));
    CHECK(disagreements(c, parsed.e, false) == std::vector<std::string>{});
  }
}

TEST_CASE("regex to gbnf: a pattern's language is what std::regex finds somewhere in a string",
          "[grammar]") {
  std::vector<regex_case> cases = regex_cases;
  cases.push_back({"^a|b$", "abc"});
  cases.push_back({"a$|^b", "abc"});
  cases.push_back({"^$", "a"});
  cases.push_back({"$", "a"});
  for (const regex_case& c : cases) {
    INFO("pattern: " << c.pattern);
    const expr e = courier::grammar::pattern_language(c.pattern);
    INFO("gbnf: " << to_gbnf(e));
    CHECK(disagreements(c, e, true) == std::vector<std::string>{});
  }
}

TEST_CASE("regex to gbnf: random patterns that both parsers accept match the same strings",
          "[grammar]") {
  // std::regex is no ECMAScript validator (it takes `a*{2}` and anchors anywhere, and refuses
  // Annex B's literal `{`), so only patterns both accept are compared.
  const std::vector<std::string> pieces{
      "a",     "b",    "(",   ")",   "(?:", "|",   "*",   "+",   "?", "[", "]",   "^",  "-", "{1}",
      "{0,2}", "{2,}", "\\d", "\\w", "\\s", "\\D", "\\W", "\\S", ".", "$", "\\.", "[^", "1", ","};
  std::mt19937 rng(11);
  const regex_case strings{"", "ab1-. \n"};  // the pattern is unused
  std::mt19937 string_rng(5);
  std::vector<std::string> texts;
  for (const std::string& s : test_strings(strings, string_rng)) {
    if (s.size() <= 3) texts.push_back(s);
  }
  int num_compared = 0;
  for (int i = 0; i < 1500; ++i) {
    std::string pattern;
    for (std::uint32_t n = 1 + rng() % 8; n > 0; --n) pattern += pieces[rng() % pieces.size()];
    INFO("pattern: " << pattern);
    expr e;
    std::regex reference;
    try {
      e = courier::grammar::parse_regex(pattern).e;
      reference = std::regex(pattern, std::regex::ECMAScript);
    } catch (const grammar_error&) {
      continue;
    } catch (const std::regex_error&) {
      continue;
    }
    const auto g = courier::grammar::compile_gbnf("root ::= " + to_gbnf(e));
    std::vector<std::string> wrong;
    for (const std::string& s : texts) {
      if (courier::grammar::full_match(g, s) != std::regex_match(s, reference)) wrong.push_back(s);
    }
    CHECK(wrong == std::vector<std::string>{});
    ++num_compared;
  }
  CHECK(num_compared > 300);  // the rest one parser or the other refused
}

TEST_CASE("regex to gbnf: a regex nested to the limit prints as GBNF nested no deeper",
          "[grammar]") {
  std::string pattern;
  for (int i = 0; i < courier::grammar::max_nesting; ++i) pattern += "(a|";
  pattern += "b";
  for (int i = 0; i < courier::grammar::max_nesting; ++i) pattern += ")c";
  const expr e = courier::grammar::parse_regex(pattern).e;
  const auto g = courier::grammar::compile_gbnf("root ::= " + to_gbnf(e));
  // Level k is `a` or level k+1, then `c`: `a` and 1 to 200 c's, or `b` and 200 c's.
  const std::size_t limit = courier::grammar::max_nesting;
  CHECK(courier::grammar::full_match(g, "b" + std::string(limit, 'c')));
  CHECK_FALSE(courier::grammar::full_match(g, "b" + std::string(limit - 1, 'c')));
  CHECK(courier::grammar::full_match(g, "ac"));
  CHECK(courier::grammar::full_match(g, "a" + std::string(limit, 'c')));
  CHECK_FALSE(courier::grammar::full_match(g, "a" + std::string(limit + 1, 'c')));
}

}  // namespace courier_test_grammar_expr_gbnf
