// Statements: for (loop variables, filters, else, unpacking, break/continue), if/elif/else,
// set (scoping, namespaces, unpacking, blocks), macros, filter blocks.
#include <catch2/catch.hpp>

#include "tests/text/jinja/render_helper.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_jinja_statements {

using courier::text::jinja::testing::render;

namespace {

const char* const data = R"({"xs": [3, 1, 2], "d": {"b": 1, "a": 2}, "e": []})";

}  // namespace

TEST_CASE("jinja for: the loop variables count from the front and the back", "[text]") {
  CHECK(render("{% for x in xs %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}"
               "{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }};{% endfor %}",
               data) == "1032truefalse3;2121falsefalse3;3210falsetrue3;");
  CHECK(render("{% for x in xs %}{{ loop.previtem }}<{{ x }}>{{ loop.nextitem }} {% endfor %}",
               data) == "<3>1 3<1>2 1<2> ");
  CHECK(render("{% for x in xs %}{{ loop.cycle('a', 'b') }}{% endfor %}", data) == "aba");
}

TEST_CASE("jinja for: an if clause filters before counting, else runs on no items", "[text]") {
  CHECK(render("{% for x in xs if x > 1 %}{{ x }}:{{ loop.index }}/{{ loop.length }} {% endfor %}",
               data) == "3:1/2 2:2/2 ");
  CHECK(render("{% for x in e %}a{% else %}empty{% endfor %}", data) == "empty");
  CHECK(render("{% for x in xs if x > 5 %}a{% else %}none{% endfor %}", data) == "none");
  CHECK(render("{% for x in missing %}a{% else %}undefined is empty{% endfor %}") ==
        "undefined is empty");
}

TEST_CASE("jinja for: iterates mappings by key, strings by character, and unpacks", "[text]") {
  CHECK(render("{% for k in d %}{{ k }}{% endfor %}", data) == "ba");
  CHECK(render("{% for k, v in d.items() %}{{ k }}={{ v }},{% endfor %}", data) == "b=1,a=2,");
  CHECK(render("{% for (a, b) in [[1, 2], [3, 4]] %}{{ a + b }} {% endfor %}") == "3 7 ");
  CHECK(render("{% for c in '\u00e9t\u00e9' %}[{{ c }}]{% endfor %}") == "[\u00e9][t][\u00e9]");
}

TEST_CASE("jinja for: break and continue, and nested loops each have their own loop", "[text]") {
  CHECK(render("{% for x in xs %}{% if x == 1 %}{% continue %}{% endif %}"
               "{% if x == 2 %}{% break %}{% endif %}{{ x }}{% endfor %}",
               data) == "3");
  CHECK(render("{% for a in [1, 2] %}{% for b in [1, 2, 3] %}{{ loop.index }}{% endfor %}"
               ":{{ loop.index }} {% endfor %}") == "123:1 123:2 ");
  CHECK(render("{% for a in [1, 2] %}{% for b in [1, 2] %}{% break %}{% endfor %}{{ a }}"
               "{% endfor %}") == "12");
}

TEST_CASE("jinja if: elif chains and else", "[text]") {
  const std::string t =
      "{% if x == 1 %}one{% elif x == 2 %}two{% elif x == 3 %}three"
      "{% else %}many{% endif %}";
  CHECK(render(t, R"({"x": 1})") == "one");
  CHECK(render(t, R"({"x": 3})") == "three");
  CHECK(render(t, R"({"x": 9})") == "many");
  CHECK(render("{% if [] %}a{% elif {} %}b{% elif '' %}c{% elif 0.0 %}d{% endif %}") == "");
}

TEST_CASE("jinja set: a loop body's assignments stay in the loop; a namespace's do not", "[text]") {
  CHECK(render("{% set y = 1 %}{% for x in xs %}{% set y = x %}{% endfor %}{{ y }}", data) == "1");
  // Not even into the loop's next iteration (Jinja's rule; @huggingface/jinja would print 333).
  CHECK(render("{% set y = 0 %}{% for x in xs %}{% if loop.first %}{% set y = x %}{% endif %}"
               "{{ y }}{% endfor %}",
               data) == "300");
  CHECK(render("{% set ns = namespace(total=0, seen=[]) %}{% for x in xs %}"
               "{% set ns.total = ns.total + x %}{% set ns.seen = ns.seen + [x] %}{% endfor %}"
               "{{ ns.total }} {{ ns.seen }}",
               data) == "6 [3, 1, 2]");
  CHECK(render("{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}{{ ns.c }}") == "12");
  // An if block shares its enclosing scope.
  CHECK(render("{% if true %}{% set z = 5 %}{% endif %}{{ z }}") == "5");
}

TEST_CASE("jinja set: unpacking, block capture and filters on a block", "[text]") {
  CHECK(render("{% set a, b = 1, 2 %}{{ a }}{{ b }}|{% set c, d = [3, 4] %}{{ c }}{{ d }}") ==
        "12|34");
  CHECK(render("{% set blk %}  x {{ 1 }}  {% endset %}[{{ blk }}]") == "[  x 1  ]");
  CHECK(render("{% set t | trim | upper %}  pad  {% endset %}[{{ t }}]") == "[PAD]");
  CHECK(render("{% set messages = messages[1:] %}{{ messages | length }}",
               R"({"messages": [1, 2, 3]})") == "2");  // a context variable can be shadowed
}

TEST_CASE("jinja macro: parameters by position and keyword, defaults, recursion", "[text]") {
  const std::string m = "{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}";
  CHECK(render(m + "{{ greet('A') }}|{{ greet('B', '?') }}|{{ greet(punct='.', name='C') }}") ==
        "Hi A!|Hi B?|Hi C.");
  CHECK(render("{% macro f(n) %}{{ n }}{% if n > 0 %},{{ f(n - 1) }}{% endif %}{% endmacro %}"
               "{{ f(3) }}") == "3,2,1,0");
  // A macro sees the template's globals, not its caller's loop variables.
  CHECK(render("{% set g = 'top' %}{% macro show() %}{{ g }}{{ x }}{% endmacro %}"
               "{% for x in [1] %}{{ show() }}{% endfor %}") == "top");
  CHECK(render("{% macro m(a, b=a * 2) %}{{ b }}{% endmacro %}{{ m(4) }}") == "8");
}

TEST_CASE("jinja blocks: filter blocks and generation blocks", "[text]") {
  CHECK(render("{% filter upper %}abc{{ 'd' }}{% endfilter %}") == "ABCD");
  CHECK(render("{% filter trim | upper %}  x  {% endfilter %}") == "X");
  CHECK(render("a{% generation %}b{% endgeneration %}c") == "abc");
}

}  // namespace courier_test_text_jinja_statements
