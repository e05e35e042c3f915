// The reasoning parser and the tool-call parser chained as a server chains them: the tool-call
// parser is fed the content deltas of the reasoning parser. Checked at every split into two
// pieces and one byte at a time.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "tests/text/output_parsers/stream_helper.hpp"
#include "text/output_parsers/reasoning_parser.hpp"
#include "text/output_parsers/tool_call_parser.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_output_parsers_chained_parsers {

using namespace courier::text::parsers;

namespace {

struct chained {
  std::string reasoning;
  testing::tool_result tools;
  bool operator==(const chained& o) const { return reasoning == o.reasoning && tools == o.tools; }
};

std::ostream& operator<<(std::ostream& os, const chained& c) {
  return os << "reasoning: \"" << c.reasoning << "\"\n" << c.tools;
}

chained run(const std::vector<std::string_view>& pieces) {
  reasoning_parser reasoning(reasoning_kind::qwen3);
  tool_call_parser tools(tool_family::hermes);
  chained out;
  const auto take = [&](const std::vector<tool_event>& events) {
    for (const tool_event& e : events) {
      if (e.k == tool_event::kind::content) out.tools.content += e.text;
      if (e.k == tool_event::kind::call_begin) out.tools.calls.push_back({e.text, ""});
      if (e.k == tool_event::kind::arguments) out.tools.calls.at(e.index).arguments += e.text;
    }
  };
  for (std::string_view piece : pieces) {
    const reasoning_delta d = reasoning.feed(piece);
    out.reasoning += d.reasoning;
    take(tools.feed(d.content));
  }
  const reasoning_delta d = reasoning.finish();
  out.reasoning += d.reasoning;
  take(tools.feed(d.content));
  take(tools.finish());
  out.tools.truncated = tools.truncated_call();
  return out;
}

void check(std::string_view whole, const chained& expected) {
  INFO("output: " << whole);
  CHECK(run({whole}) == expected);
  for (std::size_t k = 0; k <= whole.size(); ++k) {
    const chained r = run({whole.substr(0, k), whole.substr(k)});
    if (!(r == expected)) {
      INFO("split at byte " << k);
      CHECK(r == expected);
      return;
    }
  }
  std::vector<std::string_view> bytes;
  for (std::size_t i = 0; i < whole.size(); ++i) bytes.push_back(whole.substr(i, 1));
  CHECK(run(bytes) == expected);
}

}  // namespace

TEST_CASE("chained: qwen3 reasoning, then a tool call in the content", "[parsers]") {
  check(
      "<think>\nThe user wants the weather in Paris.\n</think>\n\n<tool_call>\n"
      R"({"name": "get_weather", "arguments": {"city": "Paris"}})"
      "\n</tool_call>",
      {"\nThe user wants the weather in Paris.\n",
       {"", {{"get_weather", R"({"city": "Paris"})"}}}});
}

TEST_CASE("chained: a call written inside the reasoning stays reasoning", "[parsers]") {
  check(R"(<think>maybe <tool_call>{"name": "f", "arguments": {}}</tool_call>?</think>Hi é)",
        {R"(maybe <tool_call>{"name": "f", "arguments": {}}</tool_call>?)", {"Hi é"}});
}

TEST_CASE("chained: thinking disabled, content and a call", "[parsers]") {
  check("On it: 🎉\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"q\": \"日本\"}}\n</tool_call>",
        {"", {"On it: 🎉\n", {{"f", R"({"q": "日本"})"}}}});
}

}  // namespace courier_test_text_output_parsers_chained_parsers
