// Llama 3 JSON tool calls: every output checked whole, split at every byte (and at every pair of
// bytes when short), and one byte at a time, against expectations written by hand.
#include <catch2/catch.hpp>

#include <string>

#include "tests/text/output_parsers/stream_helper.hpp"
#include "text/output_parsers/tool_call_parser.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_output_parsers_tool_call_llama {

using namespace courier::text::parsers;
using courier::text::parsers::testing::check_tool_output;

namespace {

void check(const std::string& output, const testing::tool_result& expected) {
  check_tool_output(tool_family::llama3_json, output, expected);
}

}  // namespace

TEST_CASE("llama3_json: output that does not open with a call is all content", "[parsers]") {
  check("The weather in Paris is {sunny}.", {"The weather in Paris is {sunny}."});
  check("  Hi 日本 🎉", {"  Hi 日本 🎉"});
  check(R"(Sure: {"name": "f", "parameters": {}})", {R"(Sure: {"name": "f", "parameters": {}})"});
  check("\n", {"\n"});
  check("", {""});
}

TEST_CASE("llama3_json: one call, with parameters or arguments, with or without python_tag",
          "[parsers]") {
  check(R"({"name": "get_weather", "parameters": {"city": "Paris"}})",
        {"", {{"get_weather", R"({"city": "Paris"})"}}});
  check("\n\n<|python_tag|>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}",
        {"", {{"get_weather", R"({"city": "Paris"})"}}});
  check(R"(<|python_tag|> {"parameters": {"q": "café"}, "name": "search"})",
        {"", {{"search", R"({"q": "café"})"}}});
}

TEST_CASE("llama3_json: calls separated by ';' are parallel calls", "[parsers]") {
  check(
      R"({"name": "a", "parameters": {"x": 1}}; {"name": "b", "parameters": {"y": [1, {"z": "}"}]}})",
      {"", {{"a", R"({"x": 1})"}, {"b", R"({"y": [1, {"z": "}"}]})"}}});
  check(R"({"name": "a", "parameters": {}};{"name": "b", "parameters": {}};)",
        {"", {{"a", "{}"}, {"b", "{}"}}});
}

TEST_CASE("llama3_json: arguments keep nested values and escaped strings byte for byte",
          "[parsers]") {
  const std::string args =
      R"({"s": "a \"quoted\" }, ] \\ \u00e9 🎉 日本", "n": [-1.5e3, 0, true, null], "o": {"p": {}}})";
  check(R"({"name": "f", "parameters": )" + args + "}", {"", {{"f", args}}});
}

TEST_CASE("llama3_json: text after the calls is content", "[parsers]") {
  check(R"({"name": "a", "parameters": {}} Let me know.)", {"Let me know.", {{"a", "{}"}}});
  check(R"({"name": "a", "parameters": {}}; oops)", {"; oops", {{"a", "{}"}}});
}

TEST_CASE("llama3_json: an object that is not a call is content", "[parsers]") {
  check(R"({"answer": 42})", {R"({"answer": 42})"});
  check("{not json}", {"{not json}"});
  check("<|python_tag|>print(1)", {"<|python_tag|>print(1)"});
  check(R"({"name": "f", "parameters": {"a": 1}, "name": "g"})", {"", {{"f", R"({"a": 1})"}}});
}

TEST_CASE("llama3_json: a broken call keeps what was sent and drops the rest", "[parsers]") {
  check(R"({"name": "f", "parameters": {"a": tru}}; {"name": "g", "parameters": {}})",
        {"", {{"f", R"({"a": tru)"}}});
}

TEST_CASE("llama3_json: a call cut off by the end of output", "[parsers]") {
  check(R"({"name": "a", "parameters": {"x": "日本)", {"", {{"a", R"({"x": "日本)"}}, true});
  check(R"({"name": "a", "parameters": {}}; {"name": "b", "para)",
        {"", {{"a", "{}"}, {"b", ""}}, true});
  check(R"({"name": "get_wea)", {R"({"name": "get_wea)"});
  check("<|python_t", {"<|python_t"});
}

}  // namespace courier_test_text_output_parsers_tool_call_llama
