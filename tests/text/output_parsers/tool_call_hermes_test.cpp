// Hermes tool calls (Qwen 2.5, Qwen 3): every output checked whole, split at every byte (and at
// every pair of bytes when short), and one byte at a time, against expectations written by hand.
#include <catch2/catch.hpp>

#include <string>

#include "tests/text/output_parsers/stream_helper.hpp"
#include "text/output_parsers/tool_call_parser.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_output_parsers_tool_call_hermes {

using namespace courier::text::parsers;
using courier::text::parsers::testing::check_tool_output;

namespace {

void check(const std::string& output, const testing::tool_result& expected) {
  check_tool_output(tool_family::hermes, output, expected);
}

std::string block(const std::string& object) {
  return "<tool_call>\n" + object + "\n</tool_call>";
}

}  // namespace

TEST_CASE("hermes: text without a call is content, but a marker's start at its very end",
          "[parsers]") {
  check("Hello, world!", {"Hello, world!"});
  check("Use <tool_calls> or <b>tags</b>: 1 < 2.", {"Use <tool_calls> or <b>tags</b>: 1 < 2."});
  check("It ends with <tool_ca", {"It ends with "});  // a marker, whole or partial, is no content
  check("It ends with <tool_call", {"It ends with "});
  check("1 <", {"1 "});
  check("日本語 🎉 é", {"日本語 🎉 é"});
  check("", {""});
}

TEST_CASE("hermes: content then one call", "[parsers]") {
  check("Let me check the weather.\n" +
            block(R"({"name": "get_weather", "arguments": {"city": "Paris"}})"),
        {"Let me check the weather.\n", {{"get_weather", R"({"city": "Paris"})"}}});
}

TEST_CASE("hermes: parallel calls, with whitespace between blocks", "[parsers]") {
  check(block(R"({"name": "get_weather", "arguments": {"city": "Paris"}})") + "\n\n" +
            block(R"({"name": "get_time", "arguments": {"tz": "Europe/Paris"}})"),
        {"", {{"get_weather", R"({"city": "Paris"})"}, {"get_time", R"({"tz": "Europe/Paris"})"}}});
  check(
      R"(<tool_call>{"name":"a","arguments":{}}</tool_call><tool_call>{"name":"b","arguments":{"x":[]}}</tool_call>)",
      {"", {{"a", "{}"}, {"b", R"({"x":[]})"}}});
}

TEST_CASE("hermes: arguments are passed on byte for byte, whatever their strings hold",
          "[parsers]") {
  const std::string args =
      R"({"query": {"filters": [{"field": "title", "value": "a } b ] {"}, )"
      R"([1, 2.5e-3, -0, true, false, null]]}, )"
      R"("note": "say \"hi\" \\ then </tool_call> or <tool_call>", "text": "café 日本 🎉"})";
  check(block(R"({"name": "search", "arguments": )" + args + "}"), {"", {{"search", args}}});
}

TEST_CASE("hermes: arguments before the name are held until the name is known", "[parsers]") {
  check(block(R"({"arguments": {"city": "Paris", "days": [1, 2]}, "name": "get_weather"})"),
        {"", {{"get_weather", R"({"city": "Paris", "days": [1, 2]})"}}});
}

TEST_CASE("hermes: arguments written as a JSON string are passed on decoded", "[parsers]") {
  check(block(R"({"name": "f", "arguments": "{\"city\": \"Paris \u00e9\u65e5 \ud83c\udf89\"}"})"),
        {"", {{"f", R"({"city": "Paris é日 🎉"})"}}});
  check(block(R"({"name": "f", "arguments": "{\"a\": \"x\\ny\"}"})"),
        {"", {{"f", R"({"a": "x\ny"})"}}});
}

TEST_CASE("hermes: other keys are skipped and missing arguments are {}", "[parsers]") {
  check(
      block(R"({"id": 12, "name": "f", "type": [1, {"a": null}], "arguments": {}, "x": -1.5E+2})"),
      {"", {{"f", "{}"}}});
  check(block(R"({"name": "ping"})"), {"", {{"ping", "{}"}}});
  check(block(R"({"name": "f", "arguments": {"a": 1}, "arguments": {"b": 2}, "name": "g"})"),
        {"", {{"f", R"({"a": 1})"}}});
}

TEST_CASE("hermes: content after the calls is content, without the whitespace before it",
          "[parsers]") {
  check(block(R"({"name": "f", "arguments": {}})") + "\n\nDone. 🎉", {"Done. 🎉", {{"f", "{}"}}});
  // A block with no closing tag still ends at its object.
  check(R"(<tool_call>{"name": "f", "arguments": {}} and more)", {"and more", {{"f", "{}"}}});
}

TEST_CASE("hermes: a block that is not a call is content", "[parsers]") {
  check("<tool_call>not json</tool_call>", {"<tool_call>not json</tool_call>"});
  check(R"(Before <tool_call>{"arguments": {"a": 1}}</tool_call> after)",
        {R"(Before <tool_call>{"arguments": {"a": 1}}</tool_call> after)"});
  check(R"(<tool_call>{"name": 5}</tool_call>)", {R"(<tool_call>{"name": 5}</tool_call>)"});
  check(R"(<tool_call>{"name": ""}</tool_call>)", {R"(<tool_call>{"name": ""}</tool_call>)"});
  check(R"(<tool_call>{"arguments": [1], "name": "f"}</tool_call>)",
        {R"(<tool_call>{"arguments": [1], "name": "f"}</tool_call>)"});
  check(R"(<tool_call>{'name': 'f'}</tool_call>)", {R"(<tool_call>{'name': 'f'}</tool_call>)"});
}

TEST_CASE("hermes: a failed block does not hide a call that follows it", "[parsers]") {
  check(R"(<tool_call><tool_call>{"name": "f", "arguments": {}}</tool_call>)",
        {"<tool_call>", {{"f", "{}"}}});
  check("<tool_call>oops</tool_call>\n" + block(R"({"name": "g", "arguments": {"k": "v"}})"),
        {"<tool_call>oops</tool_call>\n", {{"g", R"({"k": "v"})"}}});
}

TEST_CASE(
    "hermes: a call that breaks after its name keeps what was sent and resumes after its block",
    "[parsers]") {
  check(R"(<tool_call>{"name": "f", "arguments": {"a": 1]}</tool_call>)"
        "\n" +
            block(R"({"name": "g", "arguments": {}})") + "tail",
        {"tail", {{"f", R"({"a": 1)"}, {"g", "{}"}}});
  // The commonest slip, a missing closing brace: the arguments were complete.
  check(block(R"({"name": "f", "arguments": {"a": 1})"), {"", {{"f", R"({"a": 1})"}}});
  check(R"(<tool_call>{"name": "f" "arguments": {}}</tool_call>)", {"", {{"f", ""}}});
  check(R"(<tool_call>{"name": "f", "arguments": [1]}</tool_call>)", {"", {{"f", ""}}});
}

TEST_CASE("hermes: a call cut off by the end of output is reported with what was read",
          "[parsers]") {
  check("Sure.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pa",
        {"Sure.", {{"get_weather", R"({"city": "Pa)"}}, true});
  check(R"(<tool_call>{"name": "f", "arguments": {"t": "日本)",
        {"", {{"f", R"({"t": "日本)"}}, true});
  check(R"(<tool_call>{"name": "f", "arguments": "{\"a\": \"\ud83c)",
        {"", {{"f", "{\"a\": \"\xEF\xBF\xBD"}}, true});
  check(R"(<tool_call>{"name": "f")", {"", {{"f", ""}}, true});
  // Cut off before the name is known: nothing was sent, and the marker and what followed it are
  // no content either.
  check("Sure.<tool_call>\n{\"name\": \"get_w", {"Sure."});
  check(R"(<tool_call>{"arguments": {"a": 1}, "na)", {""});
  check("Sure.<tool_call>\n", {"Sure."});
}

// tool_choice "required" with parallel calls: max_tokens may cut the output anywhere in the next
// call's opening marker, or just after it. None of it is content, in streams too.
TEST_CASE("hermes: forced parallel calls cut off in or just after the next call's marker leave "
          "no content",
          "[parsers]") {
  const std::string first = block(R"({"name": "f", "arguments": {"a": 1}})");
  const std::string marker = "<tool_call>";
  for (std::size_t n = 1; n <= marker.size(); ++n) {
    INFO("cut after " << n << " bytes of the marker");
    check(first + "\n" + marker.substr(0, n), {"", {{"f", R"({"a": 1})"}}});
  }
  check(first + "\n<tool_call>\n", {"", {{"f", R"({"a": 1})"}}});
  check(first + "\n<tool_call>\n{\"name\": \"g", {"", {{"f", R"({"a": 1})"}}});
  check(first + "\n<tool_call>\n{\"name\": \"g\"", {"", {{"f", R"({"a": 1})"}, {"g", ""}}, true});
}

TEST_CASE("hermes: a call complete but for its closing tag is not truncated", "[parsers]") {
  check(R"(<tool_call>{"name": "f", "arguments": {}})", {"", {{"f", "{}"}}});
  check(R"(<tool_call>{"name": "f", "arguments": {}}</tool_ca)", {"", {{"f", "{}"}}});
}

TEST_CASE("hermes: saw_tool_call says whether a call was begun", "[parsers]") {
  tool_call_parser parser(tool_family::hermes);
  CHECK(parser.feed("Hi <tool_call>{\"name\": \"f").size() == 1);
  CHECK_FALSE(parser.saw_tool_call());
  const std::vector<tool_event> events = parser.feed("\", ");
  REQUIRE(events.size() == 1);
  CHECK(events[0].k == tool_event::kind::call_begin);
  CHECK(events[0].text == "f");
  CHECK(parser.saw_tool_call());
}

TEST_CASE("tool families are named as in vLLM, with short aliases", "[parsers]") {
  CHECK(tool_family_from_name("hermes") == tool_family::hermes);
  CHECK(tool_family_from_name("qwen") == tool_family::hermes);
  CHECK(tool_family_from_name("llama3_json") == tool_family::llama3_json);
  CHECK(tool_family_from_name("llama") == tool_family::llama3_json);
  CHECK(tool_family_from_name("mistral") == tool_family::mistral);
  CHECK_FALSE(tool_family_from_name("pythonic"));
}

}  // namespace courier_test_text_output_parsers_tool_call_hermes
