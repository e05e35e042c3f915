// Whitespace control and literals, as Jinja with trim_blocks and lstrip_blocks (transformers'
// environment) reads them.
#include <catch2/catch.hpp>

#include "tests/text/jinja/render_helper.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_jinja_lexer {

using courier::text::jinja::testing::render;

TEST_CASE("jinja lexer: trim_blocks drops the newline after a block tag, not after an output",
          "[text]") {
  CHECK(render("a\n{% if true %}\nb\n{% endif %}\nc") == "a\nb\nc");
  CHECK(render("{{ 'a' }}\nb") == "a\nb");
  CHECK(render("{% set x = 1 %}\n\nb") == "\nb");  // only one newline goes
}

TEST_CASE("jinja lexer: lstrip_blocks drops indentation before a block tag that starts a line",
          "[text]") {
  CHECK(render("x\n    {% if true %}y{% endif %}") == "x\ny");
  CHECK(render("    {% if true %}y{% endif %}") == "y");  // the template's first line too
  CHECK(render("x\n \t {% if true %}y{% endif %}") == "x\ny");
  // Not before an output tag, and not when other text precedes the tag on its line.
  CHECK(render("x\n    {{ 'y' }}") == "x\n    y");
  CHECK(render("x  {% if true %}y{% endif %}") == "x  y");
}

TEST_CASE("jinja lexer: a plus sign opts a tag out of lstrip_blocks and trim_blocks", "[text]") {
  CHECK(render("x\n    {%+ if true %}y{% endif %}") == "x\n    y");
  CHECK(render("{% if true +%}\ny{% endif %}") == "\ny");
}

TEST_CASE("jinja lexer: a minus sign strips all whitespace, newlines included, on its side",
          "[text]") {
  CHECK(render("a  \n  {{- 'b' -}}  \n  c") == "abc");
  CHECK(render("a\n\n{%- if true %}b{% endif %}") == "ab");
  CHECK(render("{% if true -%}\n\n   b{% endif %}") == "b");
  CHECK(render("a \u3000{{- 'b' }}") == "ab");  // Unicode spaces too
}

TEST_CASE("jinja lexer: comments vanish and take part in whitespace control", "[text]") {
  CHECK(render("a\n{# note #}\nb") == "a\nb");
  CHECK(render("a  {#- c -#}  b") == "ab");
  CHECK(render("a\n    {# indented #}\nb") == "a\nb");
  CHECK(render("{# {{ not output }} {% if %} #}ok") == "ok");
}

TEST_CASE("jinja lexer: a raw block passes tags through as text", "[text]") {
  CHECK(render("{% raw %}{{ x }}{% if %}{% endraw %}") == "{{ x }}{% if %}");
  CHECK(render("{%- raw -%}  {{ x }}  {%- endraw %}!") == "{{ x }}!");
}

TEST_CASE("jinja lexer: CRLF reads as LF and one trailing newline is dropped", "[text]") {
  CHECK(render("a\r\n{% if true %}\r\nb{% endif %}\r\n") == "a\nb");
  CHECK(render("a\n") == "a");
  CHECK(render("a\n\n") == "a\n");
  CHECK(render("a\rb") == "a\nb");
}

TEST_CASE("jinja lexer: string literals decode Python's escapes", "[text]") {
  CHECK(render(R"({{ 'a\nb' }})") == "a\nb");
  CHECK(render(R"({{ "\u00e9\x41\t" }})") == "\u00e9A\t");
  CHECK(render(R"({{ 'it\'s' }}{{ "say \"hi\"" }})") ==
        "it's"
        "say \"hi\"");
  CHECK(render(R"({{ '\\' }})") == "\\");
  CHECK(render(R"({{ '\d' }})") == "\\d");  // an unknown escape keeps its backslash
  CHECK(render(R"({{ "\ud83d\ude00" }})") == "\U0001F600");  // a surrogate pair
  CHECK(render(R"({{ "\U0001F600" }})") == "\U0001F600");
  CHECK(render("{{ 'multi\nline' }}") == "multi\nline");
  CHECK(render("{{ 'a' \"b\" 'c' }}") == "abc");  // adjacent literals concatenate
}

TEST_CASE("jinja lexer: braces inside an expression do not end it", "[text]") {
  CHECK(render("{{ {'a': {'b': 1}}['a']['b'] }}") == "1");
  CHECK(render("{{ '}}' }}") == "}}");
  CHECK(render("{% set x = '%}' %}{{ x }}") == "%}");
  CHECK(render("{ {x} }") == "{ {x} }");  // a lone brace is text
}

TEST_CASE("jinja lexer: numbers read as Jinja reads them", "[text]") {
  CHECK(render("{{ 1_000 + 1 }}") == "1001");
  CHECK(render("{{ 1.5e3 }}|{{ 2E-1 }}|{{ 10 }}") == "1500.0|0.2|10");
  CHECK(render("{{ [[1, 2], [3, 4]].1.0 }}") == "3");  // x.1.0 is x[1][0], not x[1.0]
}

}  // namespace courier_test_text_jinja_lexer
