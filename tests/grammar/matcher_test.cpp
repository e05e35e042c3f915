// The matcher against grammars whose languages are known by construction: balanced brackets
// (not regular: the stacks), JSON-like values, nullable rules, UTF-8 split across tokens.
#include "grammar/matcher.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "grammar/grammar_error.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_grammar_matcher {

using namespace courier::grammar;

namespace {

// Reference for the bracket grammar: balanced and non-empty nesting of ( ) and [ ].
bool balanced(const std::string& s) {
  std::string stack;
  for (char c : s) {
    if (c == '(' || c == '[') {
      stack += c;
    } else if (c == ')' || c == ']') {
      if (stack.empty() || stack.back() != (c == ')' ? '(' : '[')) return false;
      stack.pop_back();
    } else {
      return false;
    }
  }
  return stack.empty();
}

}  // namespace

TEST_CASE("matcher: balanced brackets match exactly the balanced strings up to length 8",
          "[grammar]") {
  const auto g = compile_gbnf(R"g(
root ::= item*
item ::= "(" root ")" | "[" root "]"
)g");
  const char alphabet[] = {'(', ')', '[', ']'};
  int checked = 0;
  for (int len = 0; len <= 8; ++len) {
    std::size_t total = 1;
    for (int i = 0; i < len; ++i) total *= 4;
    for (std::size_t code = 0; code < total; ++code) {
      std::string s;
      std::size_t c = code;
      for (int i = 0; i < len; ++i, c /= 4) s += alphabet[c % 4];
      if (full_match(g, s) != balanced(s)) FAIL("disagrees on " << s);
      ++checked;
    }
  }
  CHECK(checked == 87381);
}

TEST_CASE("matcher: accepting token by token equals accepting the whole text", "[grammar]") {
  const auto g = compile_gbnf(R"g(
root   ::= object
object ::= "{" ws ( pair ( "," ws pair )* )? "}"
pair   ::= string ":" ws value ws
value  ::= object | string | [0-9]+ | "true"
string ::= "\"" [^"\\]* "\""
ws     ::= [ \n]*
)g");
  const std::string text = R"({"a": {"b": true, "c": "x y"}, "d": 123 })";
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    matcher m(g);
    REQUIRE(m.accept(text.substr(0, cut)));
    REQUIRE(m.accept(text.substr(cut)));
    CHECK(m.can_end());
  }
  matcher m(g);
  CHECK(m.accept("{\"a\""));
  CHECK_FALSE(m.accept("}"));  // refused, and the state is unchanged
  CHECK(m.accept(":1}"));
  CHECK(m.can_end());
  CHECK(m.is_terminated());
  CHECK_FALSE(full_match(g, R"({"a": tru})"));
  CHECK_FALSE(full_match(g, R"({"a" 1})"));
}

TEST_CASE("matcher: rollback returns to the state before the undone tokens", "[grammar]") {
  const auto g = compile_gbnf(R"g(root ::= "ab" ("c" | "d") "e")g");
  matcher m(g);
  REQUIRE(m.accept("a"));
  REQUIRE(m.accept("bc"));
  CHECK(m.num_steps() == 2);
  m.rollback(1);
  CHECK(m.accept("bd"));
  CHECK(m.accept("e"));
  CHECK(m.can_end());
  CHECK_THROWS_AS(m.rollback(4), std::invalid_argument);
}

TEST_CASE("matcher: a character class matches UTF-8 split across tokens", "[grammar]") {
  const auto g = compile_gbnf(R"g(root ::= [a-zα-ω€]+ "!")g");
  matcher m(g);
  CHECK(m.accept("a\xce"));       // first byte of α
  CHECK(m.accept("\xb1\xe2"));    // its second byte, then the first of €
  CHECK_FALSE(m.accept("\x41"));  // not a continuation byte
  CHECK(m.accept("\x82\xac!"));
  CHECK(m.can_end());
  CHECK_FALSE(full_match(g, "\xce\xb1\xce!"));
  CHECK_FALSE(full_match(g, "A!"));
  CHECK(full_match(compile_gbnf("root ::= [^a]"), "\xf0\x9f\x98\x80"));
  CHECK_FALSE(full_match(compile_gbnf("root ::= [^a]"), "\xed\xa0\x80"));  // a surrogate
}

TEST_CASE("matcher: rules that match the empty string, and repeats of rules", "[grammar]") {
  const auto g = compile_gbnf(R"g(
root ::= a b{2,3} c? "."
a ::= "x"*
b ::= "y" | "z" a
c ::= ""
)g");
  for (const char* ok : {"yy.", "xxzy.", "xzxxzxy.", "yyy."}) CHECK(full_match(g, ok));
  for (const char* bad : {"y.", "yyyy.", "yy", "xy.", "zxxzxyz."}) CHECK_FALSE(full_match(g, bad));
  const auto empty = compile_gbnf("root ::= \"\" | \"a\"");
  CHECK(full_match(empty, ""));
  CHECK(full_match(empty, "a"));
  CHECK(matcher(empty).can_end());
}

TEST_CASE("matcher: deep nesting costs frames, not native stack", "[grammar]") {
  const auto g = compile_gbnf(R"g(root ::= "[" root? "]")g");
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK(full_match(g, deep));
  CHECK_FALSE(full_match(g, deep + "]"));
}

TEST_CASE("grammar compile: undefined rules, a missing root and left recursion are errors",
          "[grammar]") {
  auto message = [](const char* text) {
    try {
      compile_gbnf(text);
    } catch (const grammar_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(message("root ::= item\n"), Catch::Contains("undefined rule 'item'"));
  CHECK_THAT(message("start ::= \"a\"\n"), Catch::Contains("no rule 'root'"));
  CHECK_THAT(message("root ::= root \"a\" | \"b\"\n"), Catch::Contains("left-recursive"));
  CHECK_THAT(message("root ::= e root \"a\" | \"b\"\ne ::= \"\" | \"x\"\n"),
             Catch::Contains("left-recursive"));
  CHECK_THAT(message("root ::= (\"a\" \n"), Catch::Contains("line 1"));
  CHECK_THAT(message("root ::= [b-a]\n"), Catch::Contains("backwards"));
  CHECK_THAT(message("root ::= \"a\"{3,2}\n"), Catch::Contains("below the minimum"));
  CHECK_THAT(
      message(("root ::= " + std::string(300, '(') + "\"a\"" + std::string(300, ')')).c_str()),
      Catch::Contains("nested"));
  CHECK_THAT(message("root ::= \"a\"\n  x ::= \"b\" ]\n"), Catch::Contains("line 2"));
  CHECK_THAT(message("root ::= \"a\" x\nx ::= \"b\" x\n"),
             Catch::Contains("can never finish") && Catch::Contains("'x'"));
  CHECK_THAT(message("root ::= \"a\" [^\\x00-\\U0010FFFF]\n"), Catch::Contains("matches nothing"));
  // A rule that cannot finish is harmless when nothing reaches it.
  CHECK(message("root ::= \"a\"\nx ::= \"b\" x\n") == "no error");
}

TEST_CASE("grammar compile: long bounded repeats compile, exploding automata are refused",
          "[grammar]") {
  // 3001 DFA states, each reached in one step of the subset construction.
  const auto any = compile_gbnf("root ::= [^\\x00]{0,3000} \"!\"");
  CHECK(full_match(any, std::string(3000, 'a') + "!"));
  CHECK(full_match(any, "\xce\xb1!"));
  CHECK_FALSE(full_match(any, std::string(3001, 'a') + "!"));
  // The classic blow-up: the 13th symbol from the end is an 'a' needs 2^13 DFA states.
  try {
    compile_gbnf("root ::= [ab]* \"a\" [ab]{12}");
    FAIL("compiled");
  } catch (const grammar_error& e) {
    CHECK_THAT(e.what(), Catch::Contains("DFA states") || Catch::Contains("too complex"));
  }
}

TEST_CASE("grammar compile: a repeat past one DFA's states, of a part none of whose strings is a "
          "prefix of another, is one counted terminal matching exactly its bounds",
          "[grammar]") {
  // Bounded: 5,000 copies would be 5,000 DFA states (over max_dfa_states) or 5,000 rules.
  const auto g = compile_gbnf(R"g(root ::= [ab ]{0,5000} "q7")g");
  CHECK(g->num_rules() == 1);
  REQUIRE(g->dfas().size() == 2);
  const byte_dfa& counted = g->dfas()[0];
  REQUIRE(counted.counted());
  CHECK(counted.copies_min == 0);
  CHECK(counted.copies_max == 5000);
  CHECK(counted.table_states() == 2);
  CHECK(full_match(g, "q7"));
  CHECK(full_match(g, "a b q7"));
  CHECK(full_match(g, std::string(5000, 'b') + "q7"));
  CHECK_FALSE(full_match(g, std::string(5001, 'b') + "q7"));
  CHECK_FALSE(full_match(g, std::string(4000, 'b') + "c" + "q7"));
  CHECK_FALSE(full_match(g, std::string(4000, 'b')));
  // A lower bound, and multi-byte copies (UTF-8: a code point is never a prefix of another).
  const auto low = compile_gbnf(R"g(root ::= "<" [a-bα€]{4500,4600} ">")g");
  std::string copies;
  for (int i = 0; i < 4500; ++i) copies += i % 3 == 0 ? "\xe2\x82\xac" : i % 3 == 1 ? "a" : "\xce\xb1";
  CHECK(full_match(low, "<" + copies + ">"));
  CHECK_FALSE(full_match(low, "<" + copies.substr(0, copies.size() - 1) + ">"));  // 4,499.5
  CHECK_FALSE(full_match(low, "<" + copies.substr(3) + ">"));                       // 4,499
  CHECK(full_match(low, "<" + copies + std::string(100, 'b') + ">"));
  CHECK_FALSE(full_match(low, "<" + copies + std::string(101, 'b') + ">"));
  // Unbounded above: X{4500,}.
  const auto open = compile_gbnf(R"g(root ::= [ab]{4500,} "!")g");
  CHECK_FALSE(full_match(open, std::string(4499, 'a') + "!"));
  CHECK(full_match(open, std::string(4500, 'a') + "!"));
  CHECK(full_match(open, std::string(20000, 'b') + "!"));
  // A part one of whose strings is a prefix of another is lowered as rules, and still exact.
  const auto prefixed = compile_gbnf(R"g(root ::= ("a" | "ab"){4500} "!")g");
  CHECK(prefixed->num_rules() > 1);
  CHECK(full_match(prefixed, std::string(4500, 'a') + "!"));
  CHECK(full_match(prefixed, "ab" + std::string(4499, 'a') + "!"));
  CHECK_FALSE(full_match(prefixed, std::string(4499, 'a') + "!"));
}

}  // namespace courier_test_grammar_matcher
