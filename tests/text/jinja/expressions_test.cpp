// Expressions: operators and their precedence, literals, attribute and item access, slicing,
// tests. Expected strings follow Jinja's (Python's) semantics, printed as @huggingface/jinja
// prints values (true/false, none as nothing, lists and mappings as JSON).
#include <catch2/catch.hpp>

#include "tests/text/jinja/render_helper.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_jinja_expressions {

using courier::text::jinja::testing::render;

namespace {

const char* const data = R"({
  "xs": [3, 1, 2], "d": {"b": 1, "a": 2}, "s": "Hello World", "n": null, "t": true,
  "m": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]})";

}  // namespace

TEST_CASE("jinja expressions: arithmetic follows Python, integers stay integers", "[text]") {
  CHECK(render("{{ 1 + 2 * 3 }}|{{ (1 + 2) * 3 }}|{{ 2 ** 10 }}|{{ 2 ** 3 ** 2 }}") ==
        "7|9|1024|64");
  CHECK(render("{{ 7 // 2 }}|{{ -7 // 2 }}|{{ -7 % 3 }}|{{ 7 % -3 }}") == "3|-4|2|-2");
  CHECK(render("{{ 7 / 2 }}|{{ 10 / 5 }}|{{ 2 ** -1 }}|{{ 1.5 + 1 }}|{{ 7.5 // 2 }}") ==
        "3.5|2.0|0.5|2.5|3.0");
  CHECK(render("{{ -2 ** 2 }}|{{ - 3 + 1 }}|{{ +4 }}|{{ true + 1 }}") == "4|-2|4|2");
  CHECK(render("{{ 0.1 + 0.2 }}|{{ 1 / 3 }}") == "0.30000000000000004|0.3333333333333333");
}

TEST_CASE("jinja expressions: + joins strings and lists, ~ joins anything as text", "[text]") {
  CHECK(render("{{ 'a' + 'b' }}|{{ [1] + [2, 3] }}|{{ 'ab' * 3 }}|{{ 2 * [0] }}") ==
        "ab|[1, 2, 3]|ababab|[0, 0]");
  CHECK(render("{{ 'n=' + 1 }}", data) == "n=1");  // as @huggingface/jinja allows
  CHECK(render("{{ 'a' ~ 1 ~ none ~ t ~ missing }}", data) == "a1true");
}

TEST_CASE("jinja expressions: comparisons chain and compare numbers across types", "[text]") {
  CHECK(render("{{ 1 < 2 < 3 }}|{{ 3 > 2 > 2 }}|{{ 1 == 1.0 }}|{{ 1 != 2 }}") ==
        "true|false|true|true");
  CHECK(render("{{ 'a' < 'b' }}|{{ [1, 2] < [1, 3] }}|{{ 2 >= 2.0 }}|{{ true == 1 }}") ==
        "true|true|true|true");
  CHECK(render("{{ xs == [3, 1, 2] }}|{{ d == {'a': 2, 'b': 1} }}|{{ n == none }}", data) ==
        "true|true|true");
  CHECK(render("{{ missing == missing }}|{{ missing == none }}") == "true|false");
}

TEST_CASE("jinja expressions: in and not in look in strings, lists and mapping keys", "[text]") {
  CHECK(render("{{ 'ell' in s }}|{{ 2 in xs }}|{{ 'a' in d }}|{{ 'z' not in d }}", data) ==
        "true|true|true|true");
  CHECK(render("{{ 1 in missing }}|{{ [1] in [[1], [2]] }}") == "false|true");
}

TEST_CASE("jinja expressions: and/or return an operand and short-circuit", "[text]") {
  CHECK(render("{{ 1 and 2 }}|{{ 0 and 2 }}|{{ 0 or 'x' }}|{{ none or 0 }}") == "2|0|x|0");
  CHECK(render("{{ false and raise_exception('never') }}|{{ true or nosuch() }}") == "false|true");
  CHECK(render("{{ not 1 }}|{{ not [] }}|{{ not not 'a' }}|{{ not 1 == 2 }}") ==
        "false|true|true|true");
}

TEST_CASE("jinja expressions: the inline if, with and without else", "[text]") {
  CHECK(render("{{ 'y' if t else 'n' }}|{{ 'y' if n else 'n' }}|[{{ 'y' if n }}]", data) ==
        "y|n|[]");
  CHECK(render("{{ 'a' if false else 'b' if true else 'c' }}") == "b");
}

TEST_CASE("jinja expressions: attribute, item and negative index access", "[text]") {
  CHECK(render("{{ m[0].role }}|{{ m[1]['content'] }}|{{ d.a }}|{{ xs[-1] }}|{{ s[0] }}", data) ==
        "user|yo|2|2|H");
  // Missing things are undefined, which prints as nothing, even through a chain.
  CHECK(render("[{{ xs[5] }}{{ d.zz }}{{ m[9].role }}{{ nothing.at.all }}]", data) == "[]");
  CHECK(render("{{ '\u00e9t\u00e9'[1] }}|{{ '\u00e9t\u00e9'[-1] }}") == "t|\u00e9");
}

TEST_CASE("jinja expressions: slices, including reversed and out of range", "[text]") {
  CHECK(render("{{ s[::-1] }}|{{ s[1:4] }}|{{ s[-5:] }}|{{ s[:2] }}", data) ==
        "dlroW olleH|ell|World|He");
  CHECK(render("{{ xs[::2] }}|{{ xs[1:] }}|{{ xs[::-1] }}|{{ xs[5:] }}|{{ xs[-9:1] }}", data) ==
        "[3, 2]|[1, 2]|[2, 1, 3]|[]|[3]");
  CHECK(render("{{ xs[2:0:-1] }}|{{ xs[:-1] }}", data) == "[2, 1]|[3, 1]");
  CHECK(render("{{ 'a\u00e9b'[::-1] }}|{{ 'a\u00e9b'[1:2] }}") == "b\u00e9a|\u00e9");
}

TEST_CASE("jinja expressions: literals for lists, tuples, mappings and constants", "[text]") {
  CHECK(render("{{ [1, 'a', [true, none]] }}|{{ (1, 2) }}|{{ () }}|{{ {'k': 'v'} }}") ==
        "[1, \"a\", [true, null]]|[1, 2]|[]|{\"k\": \"v\"}");
  CHECK(render("{{ True }}{{ False }}[{{ None }}]{{ [1, 2,] | length }}") == "truefalse[]2");
}

TEST_CASE("jinja expressions: is tests, negated and with arguments", "[text]") {
  CHECK(render("{{ xs is iterable }}{{ s is iterable }}{{ d is mapping }}{{ s is string }}",
               data) == "truetruetruetrue");
  CHECK(render("{{ 1 is number }}{{ 1.5 is float }}{{ 1 is integer }}{{ t is boolean }}", data) ==
        "truetruetruetrue");
  CHECK(render("{{ n is none }}{{ n is not none }}{{ x is defined }}{{ x is undefined }}", data) ==
        "truefalsefalsetrue");
  CHECK(render("{{ false is false }}{{ true is true }}{{ 1 is true }}") == "truetruefalse");
  CHECK(render("{{ 4 is even }}{{ 3 is odd }}{{ 9 is divisibleby 3 }}{{ 9 is divisibleby(4) }}") ==
        "truetruetruefalse");
  CHECK(render("{{ 1 is eq 1 }}{{ 2 is equalto(2) }}{{ 'a' is in 'abc' }}{{ 3 is gt 2 }}") ==
        "truetruetruetrue");
  CHECK(render("{{ 'ab' is lower }}{{ 'AB' is upper }}{{ 'Ab' is lower }}") == "truetruefalse");
  CHECK(render("{{ range is callable }}{{ d is sequence }}{{ 1 is not string }}", data) ==
        "truetruetrue");
  // `is` binds tighter than `not`, as in Jinja.
  CHECK(render("{{ not x is defined }}|{{ 'y' if x is defined else 'n' }}") == "true|n");
}

TEST_CASE("jinja expressions: a filter binds tighter than any operator", "[text]") {
  CHECK(render("{{ 'a' + '  b  ' | trim + 'c' }}") == "abc");
  CHECK(render("{{ xs | length - 1 }}|{{ -1 | abs }}", R"({"xs": [1, 2]})") == "1|1");  // (-1)|abs
  CHECK(render("{{ (xs | sort)[0] }}", data) == "1");
}

}  // namespace courier_test_text_jinja_expressions
