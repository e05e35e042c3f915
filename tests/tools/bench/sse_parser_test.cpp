// courier-bench's SSE parser and the OpenAI payloads it carries.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/bench/openai_stream.hpp"
#include "tools/bench/sse_parser.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_tools_bench_sse_parser {

namespace {

using namespace courier::bench_tool;

// Every line-ending form, a comment, an event name, a multi-line event, an empty data field.
const std::string stream =
    ": keep-alive comment\n"
    "\n"
    "data: {\"choices\":[{\"text\":\"a\"}]}\n"
    "\n"
    "data:{\"choices\":[{\"text\":\"b\"}]}\r\n"
    "\r\n"
    "event: error\n"
    "data: {\"error\":{\"message\":\"overloaded\"}}\n"
    "id: 7\n"
    "\n"
    "data: first\n"
    "data:  second\n"
    "\n"
    "data: cr\r\r"
    "data\n\n"
    "retry: 100\n"
    "\n"
    "data: [DONE]\r\n\r\n";

const std::vector<std::pair<std::string, std::string>> expected = {
    {"", R"({"choices":[{"text":"a"}]})"},
    {"", R"({"choices":[{"text":"b"}]})"},
    {"error", R"({"error":{"message":"overloaded"}})"},
    {"", "first\n second"},
    {"", "cr"},
    {"", ""},
    {"", "[DONE]"},
};

std::vector<std::pair<std::string, std::string>> parse_in_pieces(
    const std::vector<std::string>& pieces) {
  sse_parser p;
  std::vector<sse_event> events;
  for (const std::string& piece : pieces) p.feed(piece, events);
  CHECK_FALSE(p.has_partial());
  std::vector<std::pair<std::string, std::string>> out;
  for (const sse_event& e : events) out.emplace_back(e.event, e.data);
  return out;
}

}  // namespace

TEST_CASE("bench sse parser: a stream split at any byte gives the same events", "[bench_tool]") {
  CHECK(parse_in_pieces({stream}) == expected);
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    INFO("split at byte " << cut);
    REQUIRE(parse_in_pieces({stream.substr(0, cut), stream.substr(cut)}) == expected);
  }
  std::vector<std::string> bytes;
  for (const char c : stream) bytes.emplace_back(1, c);
  CHECK(parse_in_pieces(bytes) == expected);
}

TEST_CASE("bench sse parser: an unfinished event is held until its blank line", "[bench_tool]") {
  sse_parser p;
  std::vector<sse_event> events;
  p.feed("data: x", events);
  CHECK(events.empty());
  CHECK(p.has_partial());
  p.feed("\n", events);
  CHECK(events.empty());
  CHECK(p.has_partial());
  p.feed("\n", events);
  REQUIRE(events.size() == 1);
  CHECK(events[0].data == "x");
  CHECK_FALSE(p.has_partial());
}

TEST_CASE("bench openai stream: payloads are content, usage, errors or the end", "[bench_tool]") {
  const auto text =
      parse_stream_data(R"({"choices":[{"index":0,"text":"hi"}]})", api_kind::completions);
  CHECK(text.content);
  CHECK(text.text == "hi");
  CHECK_FALSE(text.usage);

  // A finish chunk with empty text still counts as a chunk, as vLLM counts it.
  const auto empty = parse_stream_data(R"({"choices":[{"text":"","finish_reason":"length"}]})",
                                       api_kind::completions);
  CHECK(empty.content);
  CHECK(empty.text.empty());

  const auto usage = parse_stream_data(
      R"({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17,)"
      R"("prompt_tokens_details":{"cached_tokens":8}}})",
      api_kind::completions);
  CHECK_FALSE(usage.content);
  REQUIRE(usage.usage);
  CHECK(usage.usage->prompt_tokens == 12);
  CHECK(usage.usage->completion_tokens == 5);
  CHECK(usage.usage->cached_tokens == 8);

  const auto chat =
      parse_stream_data(R"({"choices":[{"delta":{"content":"yo"}}]})", api_kind::chat);
  CHECK(chat.content);
  CHECK(chat.text == "yo");
  const auto role =
      parse_stream_data(R"({"choices":[{"delta":{"role":"assistant"}}]})", api_kind::chat);
  CHECK(role.content);
  CHECK(role.text.empty());

  const auto error =
      parse_stream_data(R"({"error":{"message":"bad","code":400}})", api_kind::completions);
  REQUIRE(error.error);
  CHECK(*error.error == "bad");
  CHECK(parse_stream_data("[DONE]", api_kind::completions).done);
  CHECK(parse_stream_data("{not json", api_kind::completions).error);
}

TEST_CASE("bench openai stream: error bodies give their message", "[bench_tool]") {
  CHECK(error_message(R"({"error":{"message":"queue full","type":"x"}})") == "queue full");
  CHECK(error_message(R"({"message":"plain"})") == "plain");
  CHECK(error_message("Bad Gateway") == "Bad Gateway");
  CHECK(error_message(std::string(500, 'x')).size() == 200);
}

TEST_CASE("bench openai stream: request bodies ask for a stream with usage", "[bench_tool]") {
  bench_request r;
  r.prompt_ids = {5, 6, 7};
  r.input_len = 3;
  r.output_len = 9;
  const body_params p{"m", 0.5, true};
  const auto completions = nlohmann::json::parse(request_body(r, p, api_kind::completions));
  CHECK(completions["model"] == "m");
  CHECK(completions["prompt"] == nlohmann::json::array({5, 6, 7}));
  CHECK(completions["max_tokens"] == 9);
  CHECK(completions["stream"] == true);
  CHECK(completions["stream_options"]["include_usage"] == true);
  CHECK(completions["ignore_eos"] == true);
  CHECK(completions["temperature"] == 0.5);

  r.prompt_text = "hello";
  CHECK(nlohmann::json::parse(request_body(r, p, api_kind::completions))["prompt"] == "hello");
  const auto chat = nlohmann::json::parse(request_body(r, p, api_kind::chat));
  CHECK(chat["messages"][0]["role"] == "user");
  CHECK(chat["messages"][0]["content"] == "hello");
  CHECK(chat["max_completion_tokens"] == 9);
  CHECK_FALSE(chat.contains("prompt"));

  CHECK(api_for_endpoint("/v1/chat/completions") == api_kind::chat);
  CHECK(api_for_endpoint("/v1/completions") == api_kind::completions);
  CHECK(first_model_id(R"({"object":"list","data":[{"id":"tiny"},{"id":"b"}]})") == "tiny");
  CHECK_FALSE(first_model_id(R"({"data":[]})"));
}

}  // namespace courier_test_tools_bench_sse_parser
