#include "grammar/regex_parser.hpp"

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <string>

#include "grammar/grammar_error.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_grammar_regex_parser {

using courier::grammar::expr;
using courier::grammar::grammar_error;
using courier::grammar::parse_regex;
using courier::grammar::pattern_language;

namespace {

std::string describe(const expr& e);

std::string describe_code_point(char32_t cp) {
  if (cp > 0x20 && cp < 0x7F) return std::string(1, static_cast<char>(cp));
  return fmt::format("U+{:04X}", static_cast<unsigned>(cp));
}

std::string describe_children(const char* name, const expr& e) {
  std::string out = name;
  out += '(';
  for (std::size_t i = 0; i < e.children.size(); ++i) {
    if (i > 0) out += ", ";
    out += describe(e.children[i]);
  }
  return out + ')';
}

// The tree as text, so that an expected tree is written in one line and a failure shows it:
// "abc" a literal, [a-c x] a class, seq(...), alt(...), rep{m,n}(...) with n = inf.
std::string describe(const expr& e) {
  switch (e.k) {
    case expr::kind::empty:
      return "empty";
    case expr::kind::literal: {
      std::string out = "\"";
      for (char c : e.text) {
        const auto b = static_cast<unsigned char>(c);
        out += b >= 0x20 && b < 0x7F ? std::string(1, c) : fmt::format("\\x{:02X}", b);
      }
      return out + '"';
    }
    case expr::kind::char_class: {
      std::string out = "[";
      for (std::size_t i = 0; i < e.ranges.size(); ++i) {
        if (i > 0) out += ' ';
        out += describe_code_point(e.ranges[i].first);
        if (e.ranges[i].last != e.ranges[i].first) {
          out += '-' + describe_code_point(e.ranges[i].last);
        }
      }
      return out + ']';
    }
    case expr::kind::rule_ref:
      return '<' + e.text + '>';
    case expr::kind::sequence:
      return describe_children("seq", e);
    case expr::kind::alternation:
      return describe_children("alt", e);
    case expr::kind::repeat: {
      const std::string max = e.max == expr::unbounded ? "inf" : std::to_string(e.max);
      return fmt::format("rep{{{},{}}}({})", e.min, max, describe(e.children.at(0)));
    }
  }
  return "?";
}

std::string tree(std::string_view pattern) {
  return describe(parse_regex(pattern).e);
}

const std::string any_text = "rep{0,inf}([U+0000-U+D7FF U+E000-U+10FFFF])";

}  // namespace

TEST_CASE("regex parser: adjacent characters become one literal of their UTF-8 bytes",
          "[grammar]") {
  CHECK(tree("abc") == "\"abc\"");
  CHECK(parse_regex("h\xC3\xA9llo").e.text == "h\xC3\xA9llo");
  CHECK(parse_regex("\xF0\x9F\x98\x80").e.text == "\xF0\x9F\x98\x80");
  CHECK(tree("") == "empty");
}

TEST_CASE("regex parser: a quantifier applies to the last character only", "[grammar]") {
  CHECK(tree("abc*") == "seq(\"ab\", rep{0,inf}(\"c\"))");
  CHECK(tree("a+bc") == "seq(rep{1,inf}(\"a\"), \"bc\")");
}

TEST_CASE("regex parser: every quantifier form becomes a repeat, and laziness is ignored",
          "[grammar]") {
  CHECK(tree("a*") == "rep{0,inf}(\"a\")");
  CHECK(tree("a+") == "rep{1,inf}(\"a\")");
  CHECK(tree("a?") == "rep{0,1}(\"a\")");
  CHECK(tree("a{3}") == "rep{3,3}(\"a\")");
  CHECK(tree("a{2,}") == "rep{2,inf}(\"a\")");
  CHECK(tree("a{2,5}") == "rep{2,5}(\"a\")");
  CHECK(tree("a{0}") == "rep{0,0}(\"a\")");
  CHECK(tree("a{10000}") == "rep{10000,10000}(\"a\")");
  CHECK(tree("a*?") == tree("a*"));
  CHECK(tree("a??") == tree("a?"));
  CHECK(tree("a{2,5}?") == tree("a{2,5}"));
}

TEST_CASE("regex parser: capturing, non-capturing and named groups all just group", "[grammar]") {
  CHECK(tree("(ab)+") == "rep{1,inf}(\"ab\")");
  CHECK(tree("(?:ab)+") == "rep{1,inf}(\"ab\")");
  CHECK(tree("(?<word>ab)+") == "rep{1,inf}(\"ab\")");
  CHECK(tree("a(b)c") == "\"abc\"");
  CHECK(tree("a()b") == "\"ab\"");
  CHECK(tree("((((a))))") == "\"a\"");
}

TEST_CASE("regex parser: alternation binds loosest and keeps empty alternatives", "[grammar]") {
  CHECK(tree("a|bc|") == "alt(\"a\", \"bc\", empty)");
  CHECK(tree("(a|b)c") == "seq(alt(\"a\", \"b\"), \"c\")");
  CHECK(tree("x(a|)") == "seq(\"x\", alt(\"a\", empty))");
}

TEST_CASE("regex parser: a dot is any code point but the ECMAScript line terminators",
          "[grammar]") {
  CHECK(tree(".") == "[U+0000-U+0009 U+000B-U+000C U+000E-U+2027 U+202A-U+D7FF U+E000-U+10FFFF]");
}

TEST_CASE("regex parser: a class holds its characters and ranges", "[grammar]") {
  CHECK(tree("[a-cx]") == "[a-c x]");
  CHECK(tree("[xa-c]") == "[a-c x]");
  CHECK(tree("[a\\-z]") == "[- a z]");
  CHECK(tree("[-a]") == "[- a]");
  CHECK(tree("[a-]") == "[- a]");
  CHECK(tree("[\\]\\\\^]") == "[\\-^]");  // \ ] ^ are adjacent code points
  CHECK(tree("[\\u00e0-\\u00FF]") == "[U+00E0-U+00FF]");
}

TEST_CASE("regex parser: a negated class excludes its ranges and the surrogates", "[grammar]") {
  CHECK(tree("[^a]") == "[U+0000-` b-U+D7FF U+E000-U+10FFFF]");
  CHECK(tree("[^]") == "[U+0000-U+D7FF U+E000-U+10FFFF]");
}

TEST_CASE("regex parser: class escapes are ECMAScript's sets", "[grammar]") {
  CHECK(tree("\\d") == "[0-9]");
  CHECK(tree("\\w") == "[0-9 A-Z _ a-z]");
  CHECK(tree("\\s") ==
        "[U+0009-U+000D U+0020 U+00A0 U+1680 U+2000-U+200A U+2028-U+2029 U+202F U+205F U+3000 "
        "U+FEFF]");
  CHECK(tree("\\D") == "[U+0000-/ :-U+D7FF U+E000-U+10FFFF]");
  CHECK(tree("\\W") == "[U+0000-/ :-@ [-^ ` {-U+D7FF U+E000-U+10FFFF]");
  CHECK(tree("\\S") ==
        "[U+0000-U+0008 U+000E-U+001F !-U+009F U+00A1-U+167F U+1681-U+1FFF U+200B-U+2027 "
        "U+202A-U+202E U+2030-U+205E U+2060-U+2FFF U+3001-U+D7FF U+E000-U+FEFE U+FF00-U+10FFFF]");
}

TEST_CASE("regex parser: negated escapes work inside classes, negated or not", "[grammar]") {
  CHECK(tree("[\\D]") == tree("\\D"));
  CHECK(tree("[^\\D]") == tree("\\d"));
  CHECK(tree("[^\\s]") == tree("\\S"));
  CHECK(tree("[^\\S]") == tree("\\s"));
  CHECK(tree("[\\s\\S]") == "[U+0000-U+D7FF U+E000-U+10FFFF]");
  CHECK(tree("[^\\d\\s]") == tree("[^0-9\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028"
                                  "\\u2029\\u202f\\u205f\\u3000\\ufeff]"));
  CHECK(tree("[\\Wa]") == "[U+0000-/ :-@ [-^ `-a {-U+D7FF U+E000-U+10FFFF]");
}

TEST_CASE("regex parser: a dash next to a class escape is a literal dash (Annex B)", "[grammar]") {
  CHECK(tree("[\\d-@]") == "[- 0-9 @]");
  CHECK(tree("[@-\\d]") == "[- 0-9 @]");
  CHECK(tree("[\\w-.]") == "[--. 0-9 A-Z _ a-z]");  // `-` and `.` are adjacent code points
}

TEST_CASE("regex parser: character escapes become their code points", "[grammar]") {
  CHECK(tree("\\t\\n\\v\\f\\r\\0") == "\"\\x09\\x0A\\x0B\\x0C\\x0D\\x00\"");
  CHECK(tree("\\x41\\u0042\\u{43}\\u{000044}") == "\"ABCD\"");
  CHECK(parse_regex("\\u{1F600}").e.text == "\xF0\x9F\x98\x80");
  CHECK(parse_regex("\\uD83D\\uDE00").e.text == "\xF0\x9F\x98\x80");
  CHECK(tree("\\cJ\\ca") == "\"\\x0A\\x01\"");
  CHECK(tree("\\.\\*\\/\\-\\$\\^\\{\\}\\(\\)\\|\\?\\+\\\\") == "\".*/-$^{}()|?+\\\"");
  CHECK(tree("[\\b]") == "[U+0008]");
}

TEST_CASE("regex parser: braces that are not a quantifier are literals (Annex B)", "[grammar]") {
  CHECK(tree("a{") == "\"a{\"");
  CHECK(tree("a{,3}") == "\"a{,3}\"");
  CHECK(tree("a{2") == "\"a{2\"");
  CHECK(tree("x}]") == "\"x}]\"");
}

TEST_CASE("regex parser: anchors at the ends set the flags and leave the tree", "[grammar]") {
  const auto both = parse_regex("^abc$");
  CHECK(both.anchored_start);
  CHECK(both.anchored_end);
  CHECK(describe(both.e) == "\"abc\"");
  const auto none = parse_regex("abc");
  CHECK_FALSE(none.anchored_start);
  CHECK_FALSE(none.anchored_end);
  const auto start = parse_regex("^a");
  CHECK(start.anchored_start);
  CHECK_FALSE(start.anchored_end);
  const auto each = parse_regex("^a$|^b$");
  CHECK(each.anchored_start);
  CHECK(each.anchored_end);
  CHECK(describe(each.e) == "alt(\"a\", \"b\")");
  CHECK(tree("^$") == "empty");
}

TEST_CASE("regex parser: a pattern's language lets any text surround an unanchored side",
          "[grammar]") {
  CHECK(describe(pattern_language("abc")) == "seq(" + any_text + ", \"abc\", " + any_text + ")");
  CHECK(describe(pattern_language("^abc")) == "seq(\"abc\", " + any_text + ")");
  CHECK(describe(pattern_language("abc$")) == "seq(" + any_text + ", \"abc\")");
  CHECK(describe(pattern_language("^abc$")) == "\"abc\"");
  CHECK(describe(pattern_language("")) == any_text);
  CHECK(describe(pattern_language("^$")) == "empty");
  CHECK(describe(pattern_language("^a|^b")) == "seq(alt(\"a\", \"b\"), " + any_text + ")");
}

TEST_CASE("regex parser: anchors on some alternatives only bind those in a pattern's language",
          "[grammar]") {
  CHECK(describe(pattern_language("^a|b$")) ==
        "alt(seq(\"a\", " + any_text + "), seq(" + any_text + ", \"b\"))");
  CHECK_THROWS_WITH(parse_regex("^a|b"),
                    "regex: offset 3: ^ and $ must anchor every top-level alternative alike");
}

TEST_CASE("regex parser: lookaround is refused at its offset", "[grammar]") {
  CHECK_THROWS_WITH(parse_regex("ab(?=c)"), "regex: offset 2: lookahead (?=...) is not supported");
  CHECK_THROWS_WITH(parse_regex("(?!a)"),
                    "regex: offset 0: negative lookahead (?!...) is not supported");
  CHECK_THROWS_WITH(parse_regex("x(?<=a)"),
                    "regex: offset 1: lookbehind (?<=...) is not supported");
  CHECK_THROWS_WITH(parse_regex("x(?<!a)"),
                    "regex: offset 1: negative lookbehind (?<!...) is not supported");
}

TEST_CASE("regex parser: backreferences and word boundaries are refused", "[grammar]") {
  CHECK_THROWS_WITH(parse_regex("(a)\\1"), "regex: offset 3: backreference \\1 is not supported");
  CHECK_THROWS_WITH(parse_regex("(?<x>a)\\k<x>"),
                    "regex: offset 7: backreference \\k<name> is not supported");
  CHECK_THROWS_WITH(parse_regex("\\bword"), "regex: offset 0: word boundary \\b is not supported");
  CHECK_THROWS_WITH(parse_regex("a\\B"), "regex: offset 1: word boundary \\B is not supported");
}

TEST_CASE("regex parser: anchors anywhere but the ends are refused", "[grammar]") {
  const std::string start_only =
      "^ is only supported at the start of the pattern or of a top-level alternative";
  const std::string end_only =
      "$ is only supported at the end of the pattern or of a top-level alternative";
  CHECK_THROWS_WITH(parse_regex("a^b"), "regex: offset 1: " + start_only);
  CHECK_THROWS_WITH(parse_regex("(^a)"), "regex: offset 1: " + start_only);
  CHECK_THROWS_WITH(parse_regex("^^a"), "regex: offset 1: " + start_only);
  CHECK_THROWS_WITH(parse_regex("a$b"), "regex: offset 1: " + end_only);
  CHECK_THROWS_WITH(parse_regex("(a$)"), "regex: offset 2: " + end_only);
  CHECK_THROWS_WITH(parse_regex("a$*"), "regex: offset 1: " + end_only);
}

TEST_CASE("regex parser: repeat bounds past the limit or out of order are refused", "[grammar]") {
  CHECK_THROWS_WITH(parse_regex("a{10001}"), "regex: offset 1: repeat bound over 10000");
  CHECK_THROWS_WITH(parse_regex("a{1,10001}"), "regex: offset 1: repeat bound over 10000");
  CHECK_THROWS_WITH(parse_regex("a{99999999999999999999}"),
                    "regex: offset 1: repeat bound over 10000");
  CHECK_THROWS_WITH(parse_regex("ab{5,3}"), "regex: offset 2: {5,3}: numbers out of order");
}

TEST_CASE("regex parser: a quantifier with nothing to repeat is refused", "[grammar]") {
  CHECK_THROWS_WITH(parse_regex("*a"), "regex: offset 0: nothing to repeat before *");
  CHECK_THROWS_WITH(parse_regex("a|+"), "regex: offset 2: nothing to repeat before +");
  CHECK_THROWS_WITH(parse_regex("(?)"),
                    "regex: offset 0: group modifiers (?...) other than (?:...) and (?<name>...) "
                    "are not supported");
  CHECK_THROWS_WITH(parse_regex("{2}"), "regex: offset 0: nothing to repeat before {");
  CHECK_THROWS_WITH(parse_regex("a**"),
                    "regex: offset 2: nothing to repeat: a quantifier follows a quantifier");
  CHECK_THROWS_WITH(parse_regex("a{2}{3}"),
                    "regex: offset 4: nothing to repeat: a quantifier follows a quantifier");
  CHECK_THROWS_WITH(parse_regex("a*??"),
                    "regex: offset 3: nothing to repeat: a quantifier follows a quantifier");
}

TEST_CASE("regex parser: a class that matches nothing is refused", "[grammar]") {
  CHECK_THROWS_WITH(parse_regex("a[]"),
                    "regex: offset 1: a class that matches nothing is not supported");
  CHECK_THROWS_WITH(parse_regex("[]]"),
                    "regex: offset 0: a class that matches nothing is not supported");
  CHECK_THROWS_WITH(parse_regex("x|[^\\s\\S]"),
                    "regex: offset 2: a class that matches nothing is not supported");
}

TEST_CASE("regex parser: unbalanced groups and classes are refused", "[grammar]") {
  CHECK_THROWS_WITH(parse_regex("a)"), "regex: offset 1: unmatched )");
  CHECK_THROWS_WITH(parse_regex("x(a(b)"), "regex: offset 1: missing ) for this (");
  CHECK_THROWS_WITH(parse_regex("x[ab"), "regex: offset 1: missing ] for this [");
  CHECK_THROWS_WITH(parse_regex("[a\\]"), "regex: offset 0: missing ] for this [");
}

TEST_CASE("regex parser: bad escapes are refused", "[grammar]") {
  CHECK_THROWS_WITH(parse_regex("ab\\"), "regex: offset 2: \\ at the end of the pattern");
  CHECK_THROWS_WITH(parse_regex("\\q"), "regex: offset 0: unknown escape \\q");
  CHECK_THROWS_WITH(parse_regex("\\A"), "regex: offset 0: unknown escape \\A");
  CHECK_THROWS_WITH(parse_regex("\\p{L}"),
                    "regex: offset 0: Unicode property escapes \\p{...} "
                    "and \\P{...} are not supported");
  CHECK_THROWS_WITH(parse_regex("a\\x4"), "regex: offset 1: \\x needs 2 hex digits");
  CHECK_THROWS_WITH(parse_regex("\\u12g4"), "regex: offset 0: \\u needs 4 hex digits");
  CHECK_THROWS_WITH(parse_regex("\\u{}"), "regex: offset 0: \\u{...} needs hex digits and a }");
  CHECK_THROWS_WITH(parse_regex("\\u{110000}"), "regex: offset 0: \\u{...} is past U+10FFFF");
  CHECK_THROWS_WITH(parse_regex("\\uD800"),
                    "regex: offset 0: a lone surrogate cannot be matched in UTF-8 text");
  CHECK_THROWS_WITH(parse_regex("\\uDE00\\uD83D"),
                    "regex: offset 0: a lone surrogate cannot be matched in UTF-8 text");
  CHECK_THROWS_WITH(parse_regex("\\00"), "regex: offset 0: octal escapes are not supported");
  CHECK_THROWS_WITH(parse_regex("[\\1]"), "regex: offset 1: octal escapes are not supported");
  CHECK_THROWS_WITH(parse_regex("\\c1"), "regex: offset 0: \\c needs a letter");
  CHECK_THROWS_WITH(parse_regex("[z-a]"), "regex: offset 1: class range out of order");
}

TEST_CASE("regex parser: inline modifiers and bad group names are refused", "[grammar]") {
  CHECK_THROWS_WITH(parse_regex("(?i)a"),
                    "regex: offset 0: group modifiers (?...) other than (?:...) and (?<name>...) "
                    "are not supported");
  CHECK_THROWS_WITH(parse_regex("(?<1a>x)"),
                    "regex: offset 0: a named group needs a name and a closing >: (?<name>...)");
  CHECK_THROWS_WITH(parse_regex("(?<a"),
                    "regex: offset 0: a named group needs a name and a closing >: (?<name>...)");
}

TEST_CASE("regex parser: invalid UTF-8 is refused at its character offset", "[grammar]") {
  CHECK_THROWS_WITH(parse_regex("ab\xFF"), "regex: offset 2: invalid UTF-8");
  CHECK_THROWS_WITH(parse_regex("\xC3\xA9\xC3"), "regex: offset 1: invalid UTF-8");
  CHECK_THROWS_WITH(parse_regex("\xED\xA0\x80"), "regex: offset 0: invalid UTF-8");  // surrogate
  CHECK_THROWS_WITH(parse_regex("\xC0\xAF"), "regex: offset 0: invalid UTF-8");      // overlong
}

TEST_CASE("regex parser: groups nest up to the limit and no deeper", "[grammar]") {
  const int limit = courier::grammar::max_nesting;
  const std::string ok = std::string(limit, '(') + "a" + std::string(limit, ')');
  CHECK(tree(ok) == "\"a\"");
  const std::string deep = std::string(limit + 1, '(') + "a" + std::string(limit + 1, ')');
  CHECK_THROWS_WITH(parse_regex(deep),
                    fmt::format("regex: offset {}: groups nested more than {} deep", limit, limit));
  // Far past the limit: refused, not a stack overflow.
  CHECK_THROWS_AS(parse_regex(std::string(1000000, '(')), grammar_error);
}

}  // namespace courier_test_grammar_regex_parser
