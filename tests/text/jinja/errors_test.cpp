// Every failure is a template_error that names the template line; no template or context can
// crash the renderer or make it run away.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "tests/text/jinja/render_helper.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_jinja_errors {

namespace jinja = courier::text::jinja;
using jinja::render_options;
using jinja::template_error;
using jinja::testing::error_line;
using jinja::testing::render;

namespace {

std::string error_message(const std::string& source, const std::string& context = "{}",
                          const render_options& options = {}) {
  try {
    render(source, context, options);
  } catch (const template_error& e) {
    return e.what();
  }
  return "(no error)";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("jinja errors: syntax errors name the line they are on", "[text]") {
  CHECK(error_line("a\n\n{{ 1 + }}") == 3);
  CHECK(error_line("a\n{% if x %}\nb\n{% endfor %}") == 4);
  CHECK(contains(error_message("a\n{% if x %}\nb\n{% endfor %}"),
                 "'{% endfor %}' where the 'if' at line 2 needs '{% endif %}'"));
  CHECK(contains(error_message("{% for x in y %}\n\nno end"),
                 "'for' at line 1 is never closed: missing '{% endfor %}'"));
  CHECK(error_line("x\n{{ 'unclosed }}") == 2);
  CHECK(error_line("x\n\n{# unclosed comment") == 3);
  CHECK(error_line("{{ a ! b }}") == 1);
  CHECK(contains(error_message("{% frobnicate %}"), "unknown statement 'frobnicate'"));
  CHECK(contains(error_message("{% include 'x.j2' %}"), "not supported"));
  CHECK(contains(error_message("{% break %}"), "outside a for loop"));
  CHECK(contains(error_message("{{ f(a=1, 2) }}"), "positional argument after a keyword"));
  CHECK(contains(error_message("{% set x %}"), "never closed"));
}

TEST_CASE("jinja errors: unknown filters, tests, functions and methods name the line", "[text]") {
  CHECK(error_line("a\n{{ x | nosuch }}") == 2);
  CHECK(contains(error_message("{{ x | nosuch }}"), "unknown filter 'nosuch'"));
  CHECK(
      contains(error_message("\n\n{{ nosuch(1) }}"), "template line 3: unknown function 'nosuch'"));
  CHECK(contains(error_message("{{ x is nosuch }}"), "unknown test 'nosuch'"));
  CHECK(contains(error_message("{{ 'a'.nosuch() }}"), "string has no method 'nosuch'"));
  CHECK(contains(error_message("{{ x(1) }}", R"({"x": 3})"), "integer is not callable"));
  // An unknown filter in a branch never taken is no error (the template may be for a newer
  // engine than this one, and only that branch needs the filter).
  CHECK(render("{% if false %}{{ x | nosuch }}{% endif %}ok") == "ok");
}

TEST_CASE("jinja errors: raise_exception gives its message and line", "[text]") {
  try {
    render(
        "{% for m in messages %}\n{% if m == 2 %}\n{{ raise_exception('Bad: ' ~ m) }}\n"
        "{% endif %}{% endfor %}",
        R"({"messages": [1, 2]})");
    FAIL("expected a template_error");
  } catch (const template_error& e) {
    CHECK(e.message() == "Bad: 2");
    CHECK(e.line() == 3);
    CHECK(std::string(e.what()) == "template line 3: Bad: 2");
  }
  // Multi-line messages still make a one-line what().
  CHECK(error_message("{{ raise_exception('a\\nb') }}") == "template line 1: a b");
}

TEST_CASE("jinja errors: type errors are template errors, not crashes", "[text]") {
  CHECK(contains(error_message("{{ 'a' - 1 }}"),
                 "unsupported operand types for '-': string and integer"));
  CHECK(contains(error_message("{{ 1 / 0 }}|"), "division by zero"));
  CHECK(contains(error_message("{{ 1 // 0 }}"), "division"));
  CHECK(contains(error_message("{{ 9223372036854775807 + 1 }}"), "integer overflow"));
  CHECK(contains(error_message("{{ 2 ** 64 }}"), "integer overflow"));
  CHECK(contains(error_message("{% for x in 5 %}{% endfor %}"), "cannot iterate over integer"));
  CHECK(contains(error_message("{% set x.y = 1 %}", R"({"x": {}})"), "only a namespace()"));
  CHECK(contains(error_message("{{ [1] < 2 }}"), "cannot compare list with integer"));
  CHECK(contains(error_message("{{ none < 1 }}"), "unsupported operand types"));
  CHECK(contains(error_message("{{ {1: 2} }}"), "mapping keys must be strings"));
  CHECK(contains(error_message("{{ 'abc'[::0] }}"), "slice step cannot be zero"));
  CHECK(contains(error_message("{% for a, b in [1] %}{% endfor %}"), "cannot unpack integer"));
  CHECK(contains(error_message("{{ range }}"), "cannot print function 'range'"));
  CHECK(contains(error_message("{{ 'x' | tojson(indent=[]) }}"), "tojson: indent"));
  CHECK(contains(error_message("{{ 'x' | join(1, 2, 3) }}"), "join takes at most 2"));
  CHECK(contains(error_message("{{ '%d' % 'x' }}"), "a number is required"));
}

TEST_CASE("jinja errors: the render context must be a JSON object", "[text]") {
  const auto t = jinja::chat_template::parse("x");
  CHECK_THROWS_AS(t.render(nlohmann::ordered_json::array()), template_error);
  CHECK(t.render(nlohmann::json::object()) == "x");
}

TEST_CASE("jinja bounds: a runaway loop stops at the step limit, quickly", "[text]") {
  const auto start = std::chrono::steady_clock::now();
  const std::string loop =
      "{% for i in range(1000000) %}{% for j in range(1000000) %}{% endfor %}{% endfor %}";
  CHECK(contains(error_message(loop), "steps of work"));
  render_options small;
  small.max_steps = 10'000;
  CHECK(contains(error_message("{% for i in range(100000) %}{{ i }}{% endfor %}", "{}", small),
                 "more than 10000 steps"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("jinja bounds: output and string sizes are capped", "[text]") {
  render_options small;
  small.max_output_bytes = 10'000;
  CHECK(contains(error_message("{% for i in range(100) %}{{ 'x' * 500 }}{% endfor %}", "{}", small),
                 "output longer than the limit of 10000 bytes"));
  CHECK(contains(error_message("{{ 'ab' * 1000000000000 }}"), "text longer than the limit"));
  CHECK(contains(error_message("{% set ns = namespace(s='x') %}{% for i in range(100) %}"
                               "{% set ns.s = ns.s ~ ns.s %}{% endfor %}"),
                 "text longer than the limit"));
  CHECK(contains(error_message("{% set ns = namespace(l=[1]) %}{% for i in range(100) %}"
                               "{% set ns.l = ns.l + ns.l %}{% endfor %}"),
                 "steps of work"));
  CHECK(contains(error_message("{{ [0] * 100000000000 }}"), "steps of work"));
  CHECK(contains(error_message("{{ range(0, 9223372036854775807) | length }}"), "steps of work"));
}

TEST_CASE("jinja bounds: work on long strings counts, so repeating it cannot run away", "[text]") {
  const auto start = std::chrono::steady_clock::now();
  // Each of these is cheap to set up and costly per operation.
  const std::string a = "{% set a = 'x' * 1500000 %}{% set b = 'x' * 1499999 ~ 'x' %}";
  CHECK(
      contains(error_message(a + "{{ ([a, b] * 100000) == ([b, a] * 100000) }}"), "steps of work"));
  CHECK(contains(error_message(a + "{% for i in range(100000) %}{{ a.find('y') }}{% endfor %}"),
                 "steps of work"));
  CHECK(contains(error_message(a + "{% for i in range(100000) %}{{ a | length }}{% endfor %}"),
                 "steps of work"));
  CHECK(contains(error_message(a + "{% for i in range(100000) %}{{ 'y' in a }}{% endfor %}"),
                 "steps of work"));
  CHECK(contains(error_message(a + "{{ ([a, b] * 100000) | unique | length }}"), "steps of work"));
  render_options small;
  small.max_output_bytes = 1 << 20;
  CHECK(contains(error_message("{{ (['x' * 100000] * 100) | tojson }}", "{}", small),
                 "text longer than the limit of 1048576 bytes"));
  CHECK(contains(error_message("{{ (['x' * 100000] * 100) ~ '' }}", "{}", small),
                 "text longer than the limit of 1048576 bytes"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("jinja bounds: recursion and nesting are capped", "[text]") {
  CHECK(contains(error_message("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"),
                 "nested deeper than 500 levels"));
  CHECK(
      contains(error_message("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}"),
               "nested more than"));
  std::string sum = "{{ 1";
  for (int i = 0; i < 5000; ++i) sum += " + 1";
  CHECK(contains(error_message(sum + " }}"), "nested more than"));
  std::string ifs;
  for (int i = 0; i < 1000; ++i) ifs += "{% if true %}";
  CHECK(contains(error_message(ifs), "nested more than"));
  CHECK(contains(error_message("{{ " + std::string(5000, '-') + "1 }}"), "nested more than"));
  CHECK(contains(error_message("{{ " + std::string(5000, '[') + std::string(5000, ']') + " }}"),
                 "nested more than"));
}

TEST_CASE("jinja bounds: deeply nested and cyclic values are refused, not walked forever",
          "[text]") {
  CHECK(contains(error_message("{% set ns = namespace(v=[]) %}{% for i in range(1000) %}"
                               "{% set ns.v = [ns.v] %}{% endfor %}"),
                 "nested"));
  // A namespace that holds itself: printing it stops at the depth bound, and ending the render
  // frees it (the sanitizer build checks for the leak).
  CHECK(contains(error_message("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns | tojson }}"),
                 "nested too deeply"));
  CHECK(contains(error_message("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns == ns.me }}"
                               "{{ [ns] == [ns.me.me] }}"),
                 "(no error)"));
  std::string deep = "{\"v\": ";
  for (int i = 0; i < 300; ++i) deep += "[";
  for (int i = 0; i < 300; ++i) deep += "]";
  CHECK(contains(error_message("{{ v }}", deep + "}"), "nested deeper than 256 levels"));
}

}  // namespace courier_test_text_jinja_errors
