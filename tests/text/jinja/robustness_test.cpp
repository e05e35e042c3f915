// A bounded randomized test of the template engine: random token soup and random mutations of
// the five real templates, from fixed seeds. Each input may parse and render, or throw
// template_error; anything else (another exception, a crash, a hang) fails. Run under the
// sanitizers this also checks memory safety. Bounded to about two seconds.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "text/jinja/chat_template.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_jinja_robustness {

namespace jinja = courier::text::jinja;
using nlohmann::ordered_json;

namespace {

constexpr auto time_budget = std::chrono::milliseconds(900);  // per test case

const std::vector<std::string> fragments = {"{{",
                                            "}}",
                                            "{%",
                                            "%}",
                                            "{#",
                                            "#}",
                                            "{{-",
                                            "-}}",
                                            "{%-",
                                            "-%}",
                                            "{%+",
                                            "+%}",
                                            "if ",
                                            "for ",
                                            " in ",
                                            "endif",
                                            "endfor",
                                            "else",
                                            "elif ",
                                            "set ",
                                            "macro ",
                                            "endmacro",
                                            "filter ",
                                            "endfilter",
                                            "raw",
                                            "endraw",
                                            "break",
                                            "continue",
                                            "=",
                                            "(",
                                            ")",
                                            "[",
                                            "]",
                                            "{",
                                            "}",
                                            ",",
                                            ":",
                                            ".",
                                            "|",
                                            "'",
                                            "\"",
                                            "x",
                                            "messages",
                                            "message",
                                            "loop",
                                            "loop.index",
                                            "1",
                                            "2.5",
                                            "-1",
                                            "not ",
                                            " and ",
                                            " or ",
                                            " is ",
                                            "defined",
                                            "none",
                                            "trim",
                                            "tojson",
                                            "length",
                                            "items()",
                                            "namespace(",
                                            "raise_exception(",
                                            "range(",
                                            "~",
                                            "*",
                                            "**",
                                            "//",
                                            "%",
                                            "+",
                                            "-",
                                            "<",
                                            "==",
                                            "!=",
                                            "\\",
                                            "\\u",
                                            "\\x4",
                                            " ",
                                            "\n",
                                            "\t",
                                            "\xc3\xa9",
                                            "\xff",
                                            "ns.a",
                                            "['role']",
                                            "[::-1]",
                                            "[1:]",
                                            "content",
                                            "'a'",
                                            "\"b\"",
                                            " if ",
                                            " else ",
                                            "is not ",
                                            "split('x')",
                                            ".strip()"};

ordered_json context() {
  return ordered_json::parse(R"({
    "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "<tool_response>u</tool_response>"},
                 {"role": "assistant", "content": "<think>r</think>a", "tool_calls": [{"function": {"name": "f", "arguments": {"k": 1}}}]},
                 {"role": "tool", "content": "t"}, {"role": "user", "content": [{"type": "text", "text": "x"}]}],
    "tools": [{"type": "function", "function": {"name": "f"}}],
    "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>", "x": [1, "a", null], "ns": {"a": 1}})");
}

std::vector<std::string> real_templates() {
  std::ifstream in(std::string(COURIER_TEST_DATA) + "/cases/chat-cases.json");
  std::stringstream ss;
  ss << in.rdbuf();
  const ordered_json data = ordered_json::parse(ss.str());
  std::vector<std::string> out;
  for (const auto& [family, source] : data["templates"].items()) {
    out.push_back(source.get<std::string>());
  }
  return out;
}

// Parses and renders `source`; returns false if anything but a template_error escaped.
bool survives(const std::string& source, const ordered_json& ctx, std::string& what) {
  jinja::render_options small;
  small.max_steps = 200'000;
  small.max_output_bytes = 1 << 20;
  try {
    jinja::chat_template::parse(source).render(ctx, small);
  } catch (const jinja::template_error&) {
  } catch (const std::exception& e) {
    what = e.what();
    return false;
  }
  return true;
}

std::string mutate(std::string s, std::mt19937& rng) {
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n)(rng); };
  const int edits = 1 + static_cast<int>(pick(4));
  for (int i = 0; i < edits; ++i) {
    const std::size_t at = pick(s.size());
    switch (pick(4)) {
      case 0:
        s.erase(at, pick(20));
        break;
      case 1:
        s.insert(at, fragments[pick(fragments.size() - 1)]);
        break;
      case 2:
        s.insert(at, s.substr(pick(s.size()), pick(40)));
        break;
      case 3:
        if (!s.empty()) s[std::min(at, s.size() - 1)] = static_cast<char>(pick(255));
        break;
      default:
        s = s.substr(0, at) + s.substr(std::min(s.size(), at + pick(60)));
        break;
    }
  }
  return s;
}

}  // namespace

TEST_CASE("jinja robustness: random token soup parses or fails cleanly", "[text]") {
  const ordered_json ctx = context();
  std::mt19937 rng(20240601);
  const auto start = std::chrono::steady_clock::now();
  int tried = 0;
  while (std::chrono::steady_clock::now() - start < time_budget && tried < 20000) {
    std::string source;
    const int n = std::uniform_int_distribution<int>(1, 40)(rng);
    for (int i = 0; i < n; ++i) {
      source += fragments[std::uniform_int_distribution<std::size_t>(0, fragments.size() - 1)(rng)];
    }
    std::string what;
    INFO("source: " << source);
    REQUIRE(survives(source, ctx, what));
    ++tried;
  }
  CHECK(tried > 100);
}

TEST_CASE("jinja robustness: mutated real templates parse or fail cleanly", "[text]") {
  const ordered_json ctx = context();
  const std::vector<std::string> templates = real_templates();
  REQUIRE(templates.size() == 5);
  std::mt19937 rng(7);
  const auto start = std::chrono::steady_clock::now();
  int tried = 0;
  while (std::chrono::steady_clock::now() - start < time_budget && tried < 20000) {
    const std::string source =
        mutate(templates[static_cast<std::size_t>(tried) % templates.size()], rng);
    std::string what;
    INFO("source: " << source);
    REQUIRE(survives(source, ctx, what));
    ++tried;
  }
  CHECK(tried > 50);
}

}  // namespace courier_test_text_jinja_robustness
