// Well-formed outputs of every family, damaged at random (tokens dropped or replaced, the output
// cut off; a cut can fall inside a UTF-8 character): parsing never throws, streaming at random
// cuts and byte by byte agrees with the whole parse and keeps the streaming contract, and an
// output with no call comes back as content byte for byte.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "tests/text/output_parsers/stream_helper.hpp"
#include "text/output_parsers/tool_call_parser.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_output_parsers_tool_call_random {

using namespace courier::text::parsers;

namespace {

const std::vector<std::string> fragments = {"<tool_call>",
                                            "</tool_call>",
                                            "[TOOL_CALLS]",
                                            "[ARGS]",
                                            "<|python_tag|>",
                                            "{",
                                            "}",
                                            "[",
                                            "]",
                                            "\"name\"",
                                            "\"arguments\"",
                                            "\"parameters\"",
                                            ":",
                                            ",",
                                            ";",
                                            " ",
                                            "\n",
                                            "\"f\"",
                                            "\"x\\\"y}\"",
                                            "\"\\u00e9\\ud83c\\udf89\"",
                                            "1",
                                            "-2.5e3",
                                            "true",
                                            "null",
                                            "é",
                                            "日",
                                            "🎉",
                                            "get_weather",
                                            "\"",
                                            "\\",
                                            "<tool_",
                                            "Hi there"};

// A well-formed output of the family, as tokens: some content, then zero to three calls.
std::vector<std::string> well_formed(tool_family family, std::mt19937& rng) {
  std::uniform_int_distribution<int> calls(0, 3), coin(0, 1);
  std::vector<std::string> t;
  if (family != tool_family::llama3_json && coin(rng)) t = {"Hi", " there", " é🎉", "\n"};
  const std::vector<std::string> args = {"{", "\"a\"", ":",     " ", "[", "1", ",", "\"x\\\"y}\"",
                                         "]", ",",     "\"b\"", ":", "{", "}", "}"};
  const int n = calls(rng);
  const bool mistral_array = family == tool_family::mistral && coin(rng);
  if (n > 0 && mistral_array) t.insert(t.end(), {"[TOOL_CALLS]", "["});
  for (int i = 0; i < n; ++i) {
    if (family == tool_family::hermes) t.insert(t.end(), {"<tool_call>", "\n"});
    if (family == tool_family::llama3_json && i > 0) t.insert(t.end(), {";", " "});
    if (mistral_array && i > 0) t.push_back(",");
    if (family == tool_family::mistral && !mistral_array) {  // v11
      t.insert(t.end(), {"[TOOL_CALLS]", "get_weather", "[ARGS]"});
      t.insert(t.end(), args.begin(), args.end());
      continue;
    }
    const bool args_first = coin(rng);
    const std::vector<std::string> name = {"\"name\"", ":", " ", "\"get_weather\""};
    t.push_back("{");
    t.insert(t.end(), args_first ? args.begin() : name.begin(),
             args_first ? args.end() : name.end());
    if (args_first) t.insert(t.end() - static_cast<long>(args.size()), {"\"arguments\"", ":"});
    t.push_back(", ");
    if (!args_first) t.insert(t.end(), {"\"arguments\"", ":"});
    t.insert(t.end(), args_first ? name.begin() : args.begin(),
             args_first ? name.end() : args.end());
    t.push_back("}");
    if (family == tool_family::hermes) t.insert(t.end(), {"\n", "</tool_call>", "\n"});
  }
  if (n > 0 && mistral_array) t.push_back("]");
  return t;
}

// A well-formed output with each token, rarely, dropped or replaced by a random fragment, and
// sometimes cut off.
std::string random_output(tool_family family, std::mt19937& rng) {
  std::vector<std::string> tokens = well_formed(family, rng);
  std::uniform_int_distribution<int> percent(0, 99);
  std::uniform_int_distribution<std::size_t> pick(0, fragments.size() - 1);
  std::string out;
  for (const std::string& token : tokens) {
    const int p = percent(rng);
    out += p < 3 ? "" : p < 6 ? fragments[pick(rng)] : token;
  }
  if (percent(rng) < 30) out.resize(std::uniform_int_distribution<std::size_t>(0, out.size())(rng));
  return out;
}

// Without a call, the content is the whole output, or the output but for a tail that the end of
// output cut off in a marker or in a call after its marker (hermes, mistral): a marker, whole or
// partial, is never content.
bool content_or_cut_off_marker(tool_family family, const std::string& whole,
                               const std::string& content) {
  if (content == whole) return true;
  if (family == tool_family::llama3_json || whole.compare(0, content.size(), content) != 0) {
    return false;
  }
  const std::string_view marker = family == tool_family::hermes ? "<tool_call>" : "[TOOL_CALLS]";
  const std::string_view tail = std::string_view(whole).substr(content.size());
  return tail.substr(0, marker.size()) == marker.substr(0, tail.size());
}

}  // namespace

TEST_CASE("tool calls: random outputs stream as they parse whole, and lose no text without a call",
          "[parsers]") {
  std::mt19937 rng(20240611);
  std::size_t mismatches = 0, lost_text = 0, outputs = 0;
  for (tool_family family : {tool_family::hermes, tool_family::llama3_json, tool_family::mistral}) {
    for (int i = 0; i < 1500; ++i) {
      const std::string whole = random_output(family, rng);
      const parsed_output p = parse_tool_calls(family, whole);
      testing::tool_result expected{p.content, {}, p.truncated_call};
      for (const tool_call& c : p.calls) expected.calls.push_back({c.name, c.arguments});
      if (p.calls.empty() && !content_or_cut_off_marker(family, whole, p.content)) ++lost_text;
      std::uniform_int_distribution<std::size_t> cut(0, whole.size());
      std::size_t a = cut(rng), b = cut(rng);
      if (a > b) std::swap(a, b);
      const std::string_view w = whole;
      std::vector<std::string_view> bytes;
      for (std::size_t k = 0; k < w.size(); ++k) bytes.push_back(w.substr(k, 1));
      if (testing::stream(family, {w.substr(0, a), w.substr(a, b - a), w.substr(b)}) != expected ||
          testing::stream(family, bytes) != expected) {
        ++mismatches;
        UNSCOPED_INFO("family " << static_cast<int>(family) << ", output: " << whole);
      }
      ++outputs;
    }
  }
  CHECK(outputs == 4500);
  CHECK(mismatches == 0);
  CHECK(lost_text == 0);
}

}  // namespace courier_test_text_output_parsers_tool_call_random
