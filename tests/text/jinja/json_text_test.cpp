// tojson and how values print: @huggingface/jinja's formats, which the fixtures were made with.
#include <catch2/catch.hpp>

#include <cmath>

#include "tests/text/jinja/render_helper.hpp"
#include "text/jinja/json_text.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_jinja_json_text {

using courier::text::jinja::format_js_number;
using courier::text::jinja::testing::render;

TEST_CASE("jinja tojson: keeps key order and escapes only what JSON requires", "[text]") {
  CHECK(render("{{ x | tojson }}", R"({"x": {"b": 1, "a": [true, null, "s"]}})") ==
        R"({"b": 1, "a": [true, null, "s"]})");
  CHECK(render(R"({{ {'q': '"', 'b': '\\', 'n': '
', 'c': '\x01', 'h': '<>&\'', 'u': 'é✓😀'} | tojson }})") ==
        R"({"q": "\"", "b": "\\", "n": "\n", "c": "\u0001", "h": "<>&'", "u": "é✓😀"})");
  CHECK(render("{{ missing | tojson }}|{{ [missing] | tojson }}|{{ 'a' | tojson }}") ==
        R"(null|[null]|"a")");
}

TEST_CASE("jinja tojson: indent, ensure_ascii, sort_keys and separators", "[text]") {
  CHECK(render("{{ {'a': [1, {}], 'e': [], 'z': {'k': 'v'}} | tojson(indent=2) }}") ==
        "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"e\": [],\n  \"z\": {\n    \"k\": \"v\"\n  }\n}");
  CHECK(render("{{ [1] | tojson(indent='\t') }}") == "[\n\t1\n]");
  CHECK(render("{{ {'\u00e9': '\U0001F600\x7f'} | tojson(ensure_ascii=true) }}") ==
        R"({"\u00e9": "\ud83d\ude00\u007f"})");
  CHECK(render("{{ {'b': 1, 'a': 2} | tojson(sort_keys=true, separators=(',', ':')) }}") ==
        R"({"a":2,"b":1})");
  CHECK(render("{% set ns = namespace(a=1) %}{{ ns | tojson }}") == R"({"a": 1})");
}

TEST_CASE("jinja printing: floats keep .0, integral JSON floats become integers", "[text]") {
  CHECK(render("{{ 1.0 }}|{{ -0.0 }}|{{ 2.5 }}|{{ 3.0 | tojson }}|{{ 1e100 }}|{{ 0.000001 }}") ==
        "1.0|-0.0|2.5|3|1e+100|0.000001");
  // From JSON, 2.0 is the integer 2, as JavaScript's numbers make it in @huggingface/jinja.
  CHECK(render("{{ x }}|{{ x | tojson }}|{{ y }}|{{ z }}", R"({"x": 2.0, "y": 1e21, "z": 1e-7})") ==
        "2|2|1e+21|1e-7");
  CHECK(render("{{ [1, 'a', none, true, 1.5] }}|{{ {'k': none} }}") ==
        R"([1, "a", null, true, 1.5]|{"k": null})");
  CHECK(render("[{{ none }}{{ missing }}]{{ true }}{{ false }}") == "[]truefalse");
}

TEST_CASE("jinja numbers: format_js_number lays digits out as JavaScript does", "[text]") {
  CHECK(format_js_number(0.0) == "0");
  CHECK(format_js_number(-0.0) == "0");
  CHECK(format_js_number(1.0) == "1");
  CHECK(format_js_number(-2.5) == "-2.5");
  CHECK(format_js_number(0.1 + 0.2) == "0.30000000000000004");
  CHECK(format_js_number(123456789.125) == "123456789.125");
  CHECK(format_js_number(1e20) == "100000000000000000000");
  CHECK(format_js_number(1e21) == "1e+21");
  CHECK(format_js_number(1.5e300) == "1.5e+300");
  CHECK(format_js_number(0.000001) == "0.000001");
  CHECK(format_js_number(1.25e-7) == "1.25e-7");
  CHECK(format_js_number(5e-324) == "5e-324");
  CHECK(format_js_number(1.7976931348623157e308) == "1.7976931348623157e+308");
  CHECK(format_js_number(std::nan("")) == "NaN");
  CHECK(format_js_number(-HUGE_VAL) == "-Infinity");
}

}  // namespace courier_test_text_jinja_json_text
