// Python methods on strings, mappings and lists, and the global functions.
#include <catch2/catch.hpp>

#include <regex>

#include "tests/text/jinja/render_helper.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_jinja_methods {

using courier::text::jinja::render_options;
using courier::text::jinja::testing::render;

TEST_CASE("jinja methods: strip takes optional characters, as Python's does", "[text]") {
  CHECK(render("[{{ '  a b  '.strip() }}][{{ '  a '.lstrip() }}][{{ ' a  '.rstrip() }}]") ==
        "[a b][a ][ a]");
  CHECK(render("[{{ '\n\n x \n'.strip('\\n') }}][{{ 'xyax'.lstrip('xy') }}][{{ 'a\n'.rstrip('\\n') "
               "}}]") == "[ x ][ax][a]");
}

TEST_CASE("jinja methods: strip and split take Python's whitespace, str.isspace's", "[text]") {
  // Python: ' \x1ca\x85 '.strip() == 'a'; '\ufeffa'.strip() == '\ufeffa';
  // 'a\x1cb'.split() == ['a', 'b'] (U+001C..U+001F and U+0085 are whitespace, U+FEFF is not).
  CHECK(render("[{{ ' \x1c" "a\xc2\x85 '.strip() }}]") == "[a]");
  CHECK(render("[{{ '\xef\xbb\xbf" "a'.strip() }}]") == "[\xef\xbb\xbf" "a]");
  CHECK(render("{{ 'a\x1f" "b'.split() }}") == R"(["a", "b"])");
}

TEST_CASE("jinja methods: split and rsplit, with and without a separator", "[text]") {
  CHECK(render("{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'a b c'.split(' ', 1) }}") ==
        R"(["a", "b", "", "c"]|["a", "b"]|["a", "b c"])");
  CHECK(render("{{ 'a b c'.rsplit(' ', 1) }}|{{ ' a b  c '.split(none, 1) }}|"
               "{{ ' a b  c '.rsplit(none, 1) }}") ==
        R"(["a b", "c"]|["a", "b  c "]|[" a b", "c"])");
  CHECK(render("{{ 'x</think>y'.split('</think>')[-1] }}|{{ ''.split() }}|{{ ''.split(',') }}") ==
        R"(y|[]|[""])");
}

TEST_CASE("jinja methods: other string methods", "[text]") {
  CHECK(render("{{ 'abc'.startswith('ab') }}{{ 'abc'.endswith(('x', 'c')) }}{{ "
               "'a'.startswith('ab') }}") == "truetruefalse");
  CHECK(render("{{ 'hello wORLD'.title() }}|{{ 'ab'.upper() }}|{{ 'AB'.lower() }}|{{ "
               "'aB'.capitalize() }}") == "Hello World|AB|ab|Ab");
  CHECK(render("{{ 'a-b-c'.replace('-', '+') }}|{{ 'a-b-c'.replace('-', '', 1) }}") ==
        "a+b+c|ab-c");
  CHECK(render("{{ 'abcabc'.find('c') }}|{{ 'abc'.find('z') }}|{{ 'abcabc'.rfind('a') }}|"
               "{{ 'abcabc'.count('b') }}") == "2|-1|3|2");
  CHECK(render("{{ ', '.join(['a', 'b']) }}|{{ '{} and {name}'.format(1, name='x') }}|"
               "{{ '{0}{0}{1:>3}'.format('a', 'b') }}") == "a, b|1 and x|aa  b");
  CHECK(render("{{ '12'.isdigit() }}{{ 'ab'.isalpha() }}{{ ' '.isspace() }}{{ 'Ab'.isupper() }}") ==
        "truetruetruefalse");
  CHECK(render("{{ 'a\nb'.splitlines() }}") == R"(["a", "b"])");
}

TEST_CASE("jinja methods: mapping and list methods", "[text]") {
  const char* d = R"({"d": {"b": 1, "a": 2}, "xs": [1, 1, 2]})";
  CHECK(render("{{ d.get('a') }}|{{ d.get('z', 9) }}|[{{ d.get('z') }}]", d) == "2|9|[]");
  CHECK(render("{{ d.keys() | list }}|{{ d.values() | list }}|{{ d.items() | list }}", d) ==
        R"(["b", "a"]|[1, 2]|[["b", 1], ["a", 2]])");
  CHECK(render("{{ xs.index(2) }}|{{ xs.count(1) }}", d) == "2|2");
  // A key that holds a value wins over a method of the same name, as in @huggingface/jinja.
  CHECK(render("{{ m.items }}", R"({"m": {"items": 3}})") == "3");
}

TEST_CASE("jinja globals: range, dict, namespace and strftime_now", "[text]") {
  CHECK(render("{{ range(3) | list }}|{{ range(1, 10, 3) | list }}|{{ range(5, 0, -2) | list }}|"
               "{{ range(2, 2) | list }}") == "[0, 1, 2]|[1, 4, 7]|[5, 3, 1]|[]");
  CHECK(render("{{ dict(a=1, b=2) }}|{{ dict({'x': 1}, y=2) }}") ==
        R"({"a": 1, "b": 2}|{"x": 1, "y": 2})");
  render_options fixed;
  fixed.now = 1'700'000'000;  // 2023-11-14 22:13:20 UTC
  const std::string date = render("{{ strftime_now('%Y-%m-%d') }}", "{}", fixed);
  CHECK((date == "2023-11-14" || date == "2023-11-15"));  // depends on the local time zone
  CHECK(std::regex_match(render("{{ strftime_now('%d %b %Y') }}"),
                         std::regex("[0-9]{2} [A-Z][a-z]{2} [0-9]{4}")));
  CHECK(render("{% if strftime_now is defined %}yes{% endif %}") == "yes");
  // The context shadows a global.
  CHECK(render("{{ range }}", R"({"range": "mine"})") == "mine");
}

}  // namespace courier_test_text_jinja_methods
