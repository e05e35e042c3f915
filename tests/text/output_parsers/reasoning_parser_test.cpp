// The reasoning parser: each output is checked whole, cut in three at every pair of bytes, and
// one byte at a time, against the split written here by hand.
#include <catch2/catch.hpp>

#include "tests/text/output_parsers/stream_helper.hpp"
#include "text/output_parsers/reasoning_parser.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_output_parsers_reasoning_parser {

using namespace courier::text::parsers;
using courier::text::parsers::testing::check_reasoning;

TEST_CASE("reasoning: qwen3 splits a leading think block and drops the blank line after it",
          "[parsers]") {
  check_reasoning(reasoning_kind::qwen3,
                  "<think>\nThe user wants 6*7.\n</think>\n\nThe answer is 42.",
                  {"\nThe user wants 6*7.\n", "The answer is 42."});
  check_reasoning(reasoning_kind::qwen3, "<think>r</think>\nc", {"r", "c"});
  check_reasoning(reasoning_kind::qwen3, "<think>r</think>c", {"r", "c"});
}

TEST_CASE("reasoning: qwen3 drops at most two newlines after </think>", "[parsers]") {
  check_reasoning(reasoning_kind::qwen3, "<think></think>\n\n\nx\n\n", {"", "\nx\n\n"});
  check_reasoning(reasoning_kind::qwen3, "<think>r</think>\n", {"r", ""});
  check_reasoning(reasoning_kind::qwen3, "<think>r</think> \n\nx", {"r", " \n\nx"});
}

TEST_CASE("reasoning: qwen3 output without a leading think block is all content", "[parsers]") {
  check_reasoning(reasoning_kind::qwen3, "The answer is 42.", {"", "The answer is 42."});
  check_reasoning(reasoning_kind::qwen3, "Answer <think>not this</think> here",
                  {"", "Answer <think>not this</think> here"});
  check_reasoning(reasoning_kind::qwen3, "<thinking>x</think>", {"", "<thinking>x</think>"});
  check_reasoning(reasoning_kind::qwen3, "<thi", {"", "<thi"});
  check_reasoning(reasoning_kind::qwen3, "  \n", {"", "  \n"});
  check_reasoning(reasoning_kind::qwen3, "", {"", ""});
}

TEST_CASE("reasoning: whitespace before <think> goes with it", "[parsers]") {
  check_reasoning(reasoning_kind::qwen3, " \n<think>r</think>c", {"r", "c"});
  check_reasoning(reasoning_kind::deepseek_r1, "\n<think>r</think>c", {"r", "c"});
}

TEST_CASE("reasoning: only the first </think> ends reasoning", "[parsers]") {
  check_reasoning(reasoning_kind::qwen3, "<think>a</think>b</think>c<think>d",
                  {"a", "b</think>c<think>d"});
  check_reasoning(reasoning_kind::qwen3, "<think>a <think> b</think>c", {"a <think> b", "c"});
}

TEST_CASE("reasoning: a think block cut off by the end of output is all reasoning", "[parsers]") {
  check_reasoning(reasoning_kind::qwen3, "<think>still thinking</thi", {"still thinking</thi", ""});
  check_reasoning(reasoning_kind::qwen3, "<think>", {"", ""});
}

TEST_CASE("reasoning: deepseek_r1 starts in reasoning, with or without <think>", "[parsers]") {
  check_reasoning(reasoning_kind::deepseek_r1, "Let me think.\n</think>\n\nAnswer.",
                  {"Let me think.\n", "Answer."});
  check_reasoning(reasoning_kind::deepseek_r1, "<think>\nhm</think>ok", {"\nhm", "ok"});
  check_reasoning(reasoning_kind::deepseek_r1, "no end in sight", {"no end in sight", ""});
  check_reasoning(reasoning_kind::deepseek_r1, "  ", {"  ", ""});
  check_reasoning(reasoning_kind::deepseek_r1, "<thi", {"<thi", ""});
  check_reasoning(reasoning_kind::deepseek_r1, "</think>just content", {"", "just content"});
}

TEST_CASE("reasoning: non-ASCII text on both sides is never cut inside a character", "[parsers]") {
  check_reasoning(reasoning_kind::qwen3, "<think>日本 é 🎉</think>\n\n答え: 🎉é",
                  {"日本 é 🎉", "答え: 🎉é"});
  check_reasoning(reasoning_kind::deepseek_r1, "é🎉</think>日本", {"é🎉", "日本"});
}

TEST_CASE("reasoning: a character split across pieces waits for its last byte", "[parsers]") {
  reasoning_parser parser(reasoning_kind::qwen3);
  const std::string e_acute = "\xC3\xA9";
  reasoning_delta d = parser.feed("ab\xC3");
  CHECK(d.content == "ab");
  d = parser.feed(
      "\xA9"
      "c");
  CHECK(d.content == e_acute + "c");
  d = parser.feed("\xE6\x97");  // the output ends inside 日: finish gives what there is
  CHECK(d.content.empty());
  d = parser.finish();
  CHECK(d.content == "\xE6\x97");
}

TEST_CASE("reasoning: starts_in_reasoning is the general form of the two kinds", "[parsers]") {
  const std::string out = "x<think>y</think>\nz";
  const auto run = [&](reasoning_parser p) {
    reasoning_delta a = p.feed(out), b = p.finish();
    return testing::reasoning_result{a.reasoning + b.reasoning, a.content + b.content};
  };
  CHECK(run(reasoning_parser(true)) == testing::reasoning_result{"x<think>y", "z"});
  CHECK(run(reasoning_parser(false)) == testing::reasoning_result{"", out});
  const reasoning_delta r1 = split_reasoning(reasoning_kind::deepseek_r1, out);
  CHECK(testing::reasoning_result{r1.reasoning, r1.content} == run(reasoning_parser(true)));
}

TEST_CASE("reasoning: kinds are named as vLLM names its parsers", "[parsers]") {
  CHECK(reasoning_kind_from_name("qwen3") == reasoning_kind::qwen3);
  CHECK(reasoning_kind_from_name("deepseek_r1") == reasoning_kind::deepseek_r1);
  CHECK_FALSE(reasoning_kind_from_name("qwen"));
}

}  // namespace courier_test_text_output_parsers_reasoning_parser
