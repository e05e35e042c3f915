// A chat choice's output read by the family parsers and written as OpenAI's JSON: reasoning
// to reasoning_content, calls to tool_calls with ids, content null beside calls; the stream's
// deltas (cut at every byte) add up to the whole response.
#include "actors/admission/chat_output.hpp"

#include <catch2/catch.hpp>

#include "actors/admission/api_response.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_chat_output {

using namespace courier;
using namespace courier::admission;
using nlohmann::json;

namespace {

const std::string qwen_output =
    "<think>\nThe user wants weather.\n</think>\n\nChecking. "
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Z\\u00fcrich\"}}\n"
    "</tool_call>\n<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>";

chat_output_parser qwen_parser() {
  return chat_output_parser(true, false, text::parsers::tool_family::hermes);
}

api_request chat_request() {
  api_request r;
  r.kind = endpoint::chat;
  return r;
}

void add(choice_output& out, chat_pieces& p) {
  out.text += p.content;
  out.reasoning += p.reasoning;
  for (auto& c : p.calls) add_call_piece(out.tool_calls, std::move(c));
}

}  // namespace

TEST_CASE("chat output: reasoning, content and calls of a whole response", "[admission]") {
  chat_output_parser parser = qwen_parser();
  choice_output out;
  chat_pieces p;
  parser.push(qwen_output, p);
  parser.finish(p);
  add(out, p);
  CHECK(parser.called());
  out.finish_reason = "tool_calls";
  const json j = full_response(chat_request(), {"chatcmpl-1", 1, "m"}, {out}, {}, nullptr);
  const json& m = j["choices"][0]["message"];
  CHECK(m["reasoning_content"] == "\nThe user wants weather.\n");
  CHECK(m["content"] == "Checking. ");
  REQUIRE(m["tool_calls"].size() == 2);
  const json& c0 = m["tool_calls"][0];
  CHECK(c0["type"] == "function");
  CHECK(c0["function"]["name"] == "get_weather");
  CHECK(json::parse(c0["function"]["arguments"].get<std::string>()) ==
        json::parse(R"({"city": "Zürich"})"));
  CHECK(c0["id"].get<std::string>().rfind("call_", 0) == 0);
  CHECK(c0["id"].get<std::string>().size() == 5 + 24);
  CHECK(c0["id"] != m["tool_calls"][1]["id"]);
  CHECK(m["tool_calls"][1]["function"]["arguments"] == "{}");
  CHECK(c0.count("index") == 0);  // whole responses carry no index
  CHECK(j["choices"][0]["finish_reason"] == "tool_calls");

  // Calls alone: content is null, as OpenAI writes it.
  chat_output_parser calls_only(false, false, text::parsers::tool_family::hermes);
  choice_output only;
  chat_pieces q;
  calls_only.push("<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>", q);
  calls_only.finish(q);
  add(only, q);
  const json k = full_response(chat_request(), {"chatcmpl-2", 1, "m"}, {only}, {}, nullptr);
  CHECK(k["choices"][0]["message"]["content"].is_null());
  CHECK(k["choices"][0]["message"].count("reasoning_content") == 0);
}

TEST_CASE("chat output: stream deltas cut anywhere add up to the whole", "[admission]") {
  for (std::size_t cut = 0; cut <= qwen_output.size(); ++cut) {
    chat_output_parser parser = qwen_parser();
    std::vector<json> deltas;
    auto send = [&](chat_pieces& p, bool first) {
      choice_output d;
      add(d, p);
      deltas.push_back(stream_chunk(chat_request(), {"chatcmpl-1", 1, "m"}, d, first,
                                    nullptr)["choices"][0]["delta"]);
      p = chat_pieces{};
    };
    chat_pieces p;
    parser.push(qwen_output.substr(0, cut), p);
    send(p, true);
    parser.push(qwen_output.substr(cut), p);
    send(p, false);
    parser.finish(p);
    send(p, false);
    std::string reasoning, content;
    std::map<std::size_t, std::string> names, args, ids;
    for (const json& d : deltas) {
      reasoning += d.value("reasoning_content", "");
      content += d.value("content", "");
      for (const json& c : d.value("tool_calls", json::array())) {
        const std::size_t i = c["index"];
        if (c.contains("id")) {
          CHECK(ids.count(i) == 0);  // id and name once per call
          ids[i] = c["id"];
          names[i] = c["function"]["name"];
        }
        CHECK(ids.count(i) == 1);  // arguments only after the call's first piece
        args[i] += c["function"]["arguments"].get<std::string>();
      }
    }
    INFO("cut at " << cut);
    CHECK(deltas.front()["role"] == "assistant");
    CHECK(reasoning == "\nThe user wants weather.\n");
    CHECK(content == "Checking. ");
    CHECK(names == std::map<std::size_t, std::string>{{0, "get_weather"}, {1, "now"}});
    CHECK(json::parse(args[0]) == json::parse(R"({"city": "Zürich"})"));
    CHECK(args[1] == "{}");
  }
}

}  // namespace courier_test_actors_admission_chat_output
