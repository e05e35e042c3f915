// Filters, each against a value worked out by hand from Jinja's definition.
#include <catch2/catch.hpp>

#include "tests/text/jinja/render_helper.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_jinja_filters {

using courier::text::jinja::testing::render;

namespace {

const char* const data = R"({
  "xs": [3, 1, 2], "d": {"b": 1, "a": 2}, "s": "  Hello World  ", "w": ["b", "A", "c"],
  "m": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"},
        {"role": "user", "content": "again", "x": 1}]})";

}  // namespace

TEST_CASE("jinja filters: text", "[text]") {
  CHECK(render("[{{ s | trim }}]|[{{ 'xxaxx' | trim('x') }}]|{{ s | upper }}|{{ s | lower }}",
               data) == "[Hello World]|[a]|  HELLO WORLD  |  hello world  ");
  CHECK(render("{{ 'hello WORLD' | capitalize }}|{{ 'hELLO wORLD-x (y)' | title }}") ==
        "Hello world|Hello World-X (Y)");
  CHECK(render("{{ 'aXbX' | replace('X', '-') }}|{{ 'aXbX' | replace('X', '-', 1) }}") ==
        "a-b-|a-bX");
  CHECK(render("{{ 'ab' | replace('', '.') }}") == ".a.b.");
  CHECK(render("{{ 'a\nb\n\nc' | indent(2) }}|{{ 'a\nb' | indent(2, true) }}") ==
        "a\n  b\n\n  c|  a\n  b");
  CHECK(render("{{ 'a\n\nb' | indent(width='> ', blank=true) }}") == "a\n> \n> b");
  CHECK(render("{{ '<a & \"b\">' | e }}|{{ 'x' | safe }}|{{ 5 | string ~ 'x' }}") ==
        "&lt;a &amp; &#34;b&#34;&gt;|x|5x");
  CHECK(render("{{ '%s-%d-%.2f-%5s|%-4d|%03d|%%' | format('a', 7, 3.14159, 'r', 5, 7) }}") ==
        "a-7-3.14-    r|5   |007|%");
  CHECK(render("{{ 'a b  c d' | wordcount }}") == "4");
}

TEST_CASE("jinja filters: numbers and defaults", "[text]") {
  CHECK(render("{{ '3' | int + 1 }}|{{ '3.7' | int }}|{{ 'x' | int }}|{{ 'x' | int(9) }}") ==
        "4|3|0|9");
  CHECK(render("{{ 'ff' | int(base=16) }}|{{ 2.9 | int }}|{{ true | int }}") == "255|2|1");
  CHECK(render("{{ '2.5' | float }}|{{ 2 | float }}|{{ 'x' | float }}") == "2.5|2.0|0.0");
  CHECK(render("{{ -3 | abs }}|{{ -2.5 | abs }}|{{ 2.567 | round(2) }}|{{ 2.5 | round }}") ==
        "3|2.5|2.57|2.0");
  CHECK(render("{{ 2.1 | round(method='ceil') }}|{{ 2.9 | round(0, 'floor') }}") == "3.0|2.0");
  CHECK(render("{{ 'x' | default('y') }}|{{ nope | default('y') }}|{{ '' | default('y') }}|"
               "{{ '' | default('y', true) }}|{{ none | d('z', boolean=true) }}") == "x|y||y|z");
}

TEST_CASE("jinja filters: lists", "[text]") {
  CHECK(render("{{ s | length }}|{{ xs | length }}|{{ d | length }}|{{ xs | count }}", data) ==
        "15|3|2|3");
  CHECK(render("{{ xs | first }}|{{ xs | last }}|{{ 'abc' | first }}|[{{ [] | first }}]", data) ==
        "3|2|a|[]");
  CHECK(render("{{ xs | join(',') }}|{{ xs | join }}|{{ m | join(',', attribute='role') }}",
               data) == "3,1,2|312|user,assistant,user");
  CHECK(render("{{ xs | sort }}|{{ xs | sort(reverse=true) }}|{{ w | sort }}|"
               "{{ w | sort(case_sensitive=true) }}",
               data) == "[1, 2, 3]|[3, 2, 1]|[\"A\", \"b\", \"c\"]|[\"A\", \"b\", \"c\"]");
  CHECK(render("{{ m | sort(attribute='content') | map(attribute='content') | join(' ') }}",
               data) == "again hi yo");
  CHECK(render("{{ xs | reverse | list }}|{{ 'abc' | reverse }}|{{ 'abc' | list }}", data) ==
        "[2, 1, 3]|cba|[\"a\", \"b\", \"c\"]");
  CHECK(render("{{ [1, 2, 1, 3] | unique | list }}|{{ ['a', 'A', 'b'] | unique }}") ==
        "[1, 2, 3]|[\"a\", \"b\"]");
  CHECK(render("{{ xs | sum }}|{{ xs | min }}|{{ xs | max }}|{{ [{'x': 1}, {'x': 2}] | "
               "sum(attribute='x') }}",
               data) == "6|1|3|3");
  CHECK(render("{{ w | min }}|{{ w | max(case_sensitive=true) }}", data) == "A|c");
}

TEST_CASE("jinja filters: select, reject and map", "[text]") {
  CHECK(render("{{ m | selectattr('role', 'equalto', 'user') | map(attribute='content') | "
               "join(',') }}",
               data) == "hi,again");
  CHECK(render("{{ m | rejectattr('role', 'equalto', 'user') | list | length }}", data) == "1");
  CHECK(render("{{ m | selectattr('x') | list | length }}|{{ m | selectattr('x', 'defined') | "
               "list | length }}",
               data) == "1|1");
  CHECK(render("{{ m | map(attribute='x', default=0) | list }}", data) == "[0, 0, 1]");
  CHECK(render("{{ xs | select('odd') | list }}|{{ xs | reject('odd') | list }}|"
               "{{ [0, 1, ''] | select | list }}",
               data) == "[3, 1]|[2]|[1]");
  CHECK(render("{{ xs | map('string') | join('-') }}|{{ ['a'] | map('upper') | first }}", data) ==
        "3-1-2|A");
  CHECK(render("{{ [{'a': {'b': 7}}] | map(attribute='a.b') | first }}") == "7");
  CHECK(render("{{ xs | select('==', 1) | list }}|{{ xs | select('gt', 1) | list }}", data) ==
        "[1]|[3, 2]");
}

TEST_CASE("jinja filters: mappings", "[text]") {
  CHECK(render("{{ d | items | list }}|{{ d | dictsort }}", data) ==
        "[[\"b\", 1], [\"a\", 2]]|[[\"a\", 2], [\"b\", 1]]");
  CHECK(render("{{ d | dictsort(by='value', reverse=true) }}", data) == "[[\"a\", 2], [\"b\", 1]]");
  CHECK(render("{{ d | list }}|{{ d | attr('a') }}", data) == "[\"b\", \"a\"]|2");
}

}  // namespace courier_test_text_jinja_filters
