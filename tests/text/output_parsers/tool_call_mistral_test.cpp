// Mistral tool calls, both the JSON array form and the v11 `name[ARGS]{...}` form: every output
// checked whole, split at every byte (and at every pair of bytes when short), and one byte at a
// time, against expectations written by hand.
#include <catch2/catch.hpp>

#include <string>

#include "tests/text/output_parsers/stream_helper.hpp"
#include "text/output_parsers/tool_call_parser.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_output_parsers_tool_call_mistral {

using namespace courier::text::parsers;
using courier::text::parsers::testing::check_tool_output;

namespace {

void check(const std::string& output, const testing::tool_result& expected) {
  check_tool_output(tool_family::mistral, output, expected);
}

}  // namespace

TEST_CASE("mistral: text without [TOOL_CALLS] is content, but a marker's start at its very end",
          "[parsers]") {
  check("Bonjour ! [1, 2] [TOOL] é", {"Bonjour ! [1, 2] [TOOL] é"});
  check("ends with [TOOL_CA", {"ends with "});  // a marker, whole or partial, is no content
}

TEST_CASE("mistral: the array form, after content or not", "[parsers]") {
  check(
      R"([TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {"tz": "CET"}}])",
      {"", {{"get_weather", R"({"city": "Paris"})"}, {"get_time", R"({"tz": "CET"})"}}});
  check(R"(Let me check. [TOOL_CALLS] [{"arguments": {"q": "日本"}, "name": "search"}])",
        {"Let me check. ", {{"search", R"({"q": "日本"})"}}});
  check(R"([TOOL_CALLS][{"name": "f", "arguments": {}}] Done.)", {"Done.", {{"f", "{}"}}});
}

TEST_CASE("mistral: the v11 form, one [TOOL_CALLS] per call", "[parsers]") {
  check(R"([TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]get_time[ARGS]{"tz": "CET"})",
        {"", {{"get_weather", R"({"city": "Paris"})"}, {"get_time", R"({"tz": "CET"})"}}});
  const std::string args =
      R"({"q": "what is [TOOL_CALLS] or [ARGS]? }{", "n": [1, {"a": "é \"🎉\""}], "e": {}})";
  check("Searching.[TOOL_CALLS]web.search-v2[ARGS]" + args + "\nthen content",
        {"Searching.then content", {{"web.search-v2", args}}});
}

TEST_CASE("mistral: a marker that leads to no call is content", "[parsers]") {
  check("[TOOL_CALLS]not a call", {"[TOOL_CALLS]not a call"});
  check("[TOOL_CALLS] [oops]", {"[TOOL_CALLS] [oops]"});
  check("[TOOL_CALLS][]", {"[TOOL_CALLS][]"});
  check("[TOOL_CALLS]f[ARGS]oops", {"[TOOL_CALLS]f[ARGS]oops"});
  check(R"([TOOL_CALLS][{"name": "f", "arguments": {}}, 5])", {", 5]", {{"f", "{}"}}});
}

TEST_CASE("mistral: a broken call keeps what was sent and resumes at the next marker",
          "[parsers]") {
  check(R"([TOOL_CALLS]f[ARGS]{"a": 1]}[TOOL_CALLS]g[ARGS]{})",
        {"", {{"f", R"({"a": 1)"}, {"g", "{}"}}});
  check(R"([TOOL_CALLS][{"name": "f", "arguments": {"a": x}}] text)", {"", {{"f", R"({"a": )"}}});
}

TEST_CASE("mistral: a call cut off by the end of output", "[parsers]") {
  check(R"([TOOL_CALLS]f[ARGS]{"a": "b)", {"", {{"f", R"({"a": "b)"}}, true});
  check(R"([TOOL_CALLS][{"name": "f", "arguments": {"a": [)", {"", {{"f", R"({"a": [)"}}, true});
  // Cut off before the call is sent: the marker and what followed it are no content.
  check("[TOOL_CALLS]get_wea", {""});
  check("Calling.[TOOL_CALLS]f[AR", {"Calling."});
  check("[TOOL_CALLS]f[ARGS] ", {""});
  check("[TOOL_CALLS] ", {""});
  check(R"([TOOL_CALLS][{"name": "f", "arguments": {}}, {"na)", {"", {{"f", "{}"}}});
}

}  // namespace courier_test_text_output_parsers_tool_call_mistral
