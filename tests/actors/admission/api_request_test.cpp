// Request bodies as real clients and hostile ones send them, parsed against the bundled tiny
// Qwen3 (its real tokenizer and chat template): nesting bounds, content parts, roles, tool-call
// histories (against @huggingface/jinja's rendering), nulls, unknown fields, logit_bias, limits.
#include <catch2/catch.hpp>

#include <fstream>
#include <tuple>
#include <nlohmann/json.hpp>

#include "actors/admission/admission_context.hpp"
#include "actors/admission/admission_server.hpp"
#include "actors/admission/api_request.hpp"
#include "actors/admission/json_body.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/text_assets.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_api_request {

using namespace courier;
using namespace courier::admission;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

std::shared_ptr<admission_context> qwen_context() {
  auto ctx = std::make_shared<admission_context>();
  ctx->model_name = "tiny-qwen3";
  ctx->max_model_len = 4096;
  ctx->vocab_size = 151936;
  test::use_shared_text_assets(*ctx, test::model_dir("tiny-qwen3"));
  ctx->max_text_bytes_per_id = ctx->tok->max_text_bytes_per_id();
  return ctx;
}

const admission_context& ctx() {
  static const auto c = qwen_context();
  return *c;
}

api_request chat(const ordered_json& body) {
  return parse_api_request(endpoint::chat, body.dump(), ctx());
}

ordered_json chat_body(ordered_json messages) {
  return {{"model", "tiny-qwen3"}, {"messages", std::move(messages)}, {"max_tokens", 4}};
}

// The api_error a body gets (status 0 when it is accepted).
api_error error_of(endpoint kind, const std::string& body, const admission_context& c = ctx()) {
  try {
    parse_api_request(kind, body, c);
  } catch (const api_error& e) {
    return e;
  }
  return api_error(0, "accepted");
}

std::string nested(int depth, const std::string& inner = "1") {
  return std::string(static_cast<std::size_t>(depth), '[') + inner +
         std::string(static_cast<std::size_t>(depth), ']');
}

std::vector<msg::token_id> prompt_of(const std::string& rendered) {
  return ctx().tok->encode(rendered, false);
}

}  // namespace

TEST_CASE("api request: nesting depth is counted outside strings, and stops early",
          "[admission]") {
  CHECK(json_nesting_depth(R"({"a": [1, {"b": []}]})", 64) == 4);
  CHECK(json_nesting_depth(R"({"a": "[[[[{{{{"})", 64) == 1);
  CHECK(json_nesting_depth(R"({"a": "\"[[[", "b": [[]]})", 64) == 3);
  CHECK(json_nesting_depth(R"({"a": "\\", "b": [[]]})", 64) == 3);
  CHECK(json_nesting_depth(nested(100000), 64) == 65);
  CHECK(json_nesting_depth("", 64) == 0);
}

TEST_CASE("api request: a body nested 100k levels deep anywhere is a 400 naming the limit",
          "[admission]") {
  const std::string deep = nested(100000);
  const std::string user = R"({"role": "user", "content": "hi"})";
  const std::vector<std::string> bodies = {
      R"({"model": "tiny-qwen3", "messages": [{"role": "user", "content": )" + deep + "}]}",
      R"({"model": "tiny-qwen3", "messages": [)" + user + R"(], "tools": )" + deep + "}",
      R"({"model": "tiny-qwen3", "messages": [)" + user + R"(], "chat_template_kwargs": {"x": )" +
          deep + "}}",
      R"({"model": "tiny-qwen3", "messages": [{"role": "user", "content": "hi", "extra": )" + deep +
          "}]}",
      R"({"model": "tiny-qwen3", "messages": [)" + user + R"(], "unknown_field": )" + deep + "}",
  };
  for (const std::string& body : bodies) {
    const api_error e = error_of(endpoint::chat, body);
    CHECK(e.status == 400);
    CHECK_THAT(e.what(), Catch::Contains("64 levels") && Catch::Contains("server.max_json_depth"));
  }
  const api_error e = error_of(endpoint::completions,
                               R"({"model": "tiny-qwen3", "prompt": )" + deep + "}");
  CHECK(e.status == 400);
  CHECK_THAT(e.what(), Catch::Contains("server.max_json_depth"));
}

TEST_CASE("api request: tool-call arguments nested 90k levels inside their string are a 400 "
          "naming the field",
          "[admission]") {
  // The reported crash: the arguments string parsed after the body's depth check, unbounded,
  // then rendered through the chat template's tojson.
  const std::string deep = std::string(90000, '[') + std::string(90000, ']');
  ordered_json body = chat_body(
      {{{"role", "user"}, {"content", "hi"}},
       {{"role", "assistant"},
        {"content", ""},
        {"tool_calls",
         {{{"id", "call_1"},
           {"type", "function"},
           {"function", {{"name", "f"}, {"arguments", "{\"a\": " + deep + "}"}}}}}}},
       {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "ok"}}});
  const api_error e = error_of(endpoint::chat, body.dump());
  CHECK(e.status == 400);
  CHECK(e.param == "messages[1].tool_calls[0].function.arguments");
  CHECK_THAT(e.what(), Catch::Contains("server.max_json_depth"));
  // Shallow arguments are still an object for the template.
  body["messages"][1]["tool_calls"][0]["function"]["arguments"] = R"({"a": [[1]]})";
  CHECK(error_of(endpoint::chat, body.dump()).status == 0);
}

TEST_CASE("api request: nesting up to server.max_json_depth is accepted", "[admission]") {
  auto c = qwen_context();
  c->max_json_depth = 8;
  // Depth 8: the body, messages, a message, then 5 levels inside an extra key.
  const std::string at_limit =
      R"({"model": "tiny-qwen3", "messages": [{"role": "user", "content": "hi", "x": )" +
      nested(5) + "}]}";
  CHECK(json_nesting_depth(at_limit, 64) == 8);
  CHECK(error_of(endpoint::chat, at_limit, *c).status == 0);
  const std::string over =
      R"({"model": "tiny-qwen3", "messages": [{"role": "user", "content": "hi", "x": )" +
      nested(6) + "}]}";
  CHECK(error_of(endpoint::chat, over, *c).status == 400);
}

TEST_CASE("api request: content given as text parts renders as the parts joined by newlines",
          "[admission]") {
  const ordered_json parts = chat_body(
      {{{"role", "user"},
        {"content", {{{"type", "text"}, {"text", "first"}}, {{"type", "text"}, {"text", "second"}}}}}});
  const ordered_json joined = chat_body({{{"role", "user"}, {"content", "first\nsecond"}}});
  CHECK(chat(parts).prompts == chat(joined).prompts);
  CHECK(chat(parts).prompts.at(0) ==
        prompt_of("<|im_start|>user\nfirst\nsecond<|im_end|>\n<|im_start|>assistant\n"));
  // Parts in every role, including the system message the template treats apart.
  const ordered_json all_roles = chat_body(
      {{{"role", "system"}, {"content", {{{"type", "text"}, {"text", "S"}}}}},
       {{"role", "user"}, {"content", {{{"type", "text"}, {"text", "U"}}}}},
       {{"role", "assistant"}, {"content", {{{"type", "text"}, {"text", "A"}}}}},
       {{"role", "user"}, {"content", "again"}}});
  const ordered_json plain = chat_body({{{"role", "system"}, {"content", "S"}},
                                        {{"role", "user"}, {"content", "U"}},
                                        {{"role", "assistant"}, {"content", "A"}},
                                        {{"role", "user"}, {"content", "again"}}});
  CHECK(chat(all_roles).prompts == chat(plain).prompts);
}

TEST_CASE("api request: the developer role is the system role; an unknown role is a 400",
          "[admission]") {
  const auto as_developer =
      chat(chat_body({{{"role", "developer"}, {"content", "Be brief."}}, {{"role", "user"}, {"content", "Hi"}}}));
  const auto as_system =
      chat(chat_body({{{"role", "system"}, {"content", "Be brief."}}, {{"role", "user"}, {"content", "Hi"}}}));
  CHECK(as_developer.prompts == as_system.prompts);
  const api_error e = error_of(
      endpoint::chat, chat_body({{{"role", "wizard"}, {"content", "Hi"}}}).dump());
  CHECK(e.status == 400);
  CHECK_THAT(e.what(), Catch::Contains("messages[0].role") && Catch::Contains("wizard"));
}

TEST_CASE("api request: image and audio parts are a 400 saying the model takes text only",
          "[admission]") {
  for (const char* type : {"image_url", "input_audio"}) {
    const ordered_json body = chat_body(
        {{{"role", "user"},
          {"content",
           {{{"type", "text"}, {"text", "what is this?"}}, {{"type", type}, {type, {{"url", "x"}}}}}}}});
    const api_error e = error_of(endpoint::chat, body.dump());
    CHECK(e.status == 400);
    CHECK_THAT(e.what(), Catch::Contains("text only") && Catch::Contains("messages[0].content[1]"));
  }
}

TEST_CASE("api request: a tool-result history renders as @huggingface/jinja renders it",
          "[admission]") {
  std::ifstream in(test::data_dir() + "/cases/tool-chat-cases.json");
  const ordered_json cases = ordered_json::parse(in)["cases"];  // tools keep their key order
  const ordered_json* qwen = nullptr;
  for (const ordered_json& c : cases) {
    if (c["family"] == "qwen3") qwen = &c;
  }
  REQUIRE(qwen != nullptr);
  // The same conversation as the AI SDK and the openai client send it: developer role, content
  // null next to tool_calls whose arguments are a JSON string, the last user turn in parts.
  const ordered_json messages = ordered_json::parse(R"([
    {"role": "developer", "content": "You are helpful."},
    {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
      "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 21}"},
    {"role": "user", "content": [{"type": "text", "text": "Thanks."},
                                 {"type": "text", "text": "And tomorrow?"}]}])");
  ordered_json body = chat_body(messages);
  body["tools"] = qwen->at("tools");
  CHECK(chat(body).prompts.at(0) == prompt_of(qwen->at("rendered").get<std::string>()));
}

TEST_CASE("api request: null for an optional field means not given", "[admission]") {
  const ordered_json base = chat_body({{{"role", "user"}, {"content", "Hi"}}});
  const api_request plain = chat(base);
  for (const char* field :
       {"temperature", "top_p", "n", "stream", "presence_penalty", "frequency_penalty", "top_k",
        "response_format", "seed", "stop", "logprobs", "top_logprobs", "stream_options",
        "logit_bias", "tools", "chat_template_kwargs", "user", "min_p", "max_completion_tokens"}) {
    ordered_json body = base;
    body[field] = nullptr;
    INFO(field);
    const api_request r = chat(body);
    CHECK(r.prompts == plain.prompts);
    CHECK(r.n == plain.n);
    CHECK(r.stream == plain.stream);
    CHECK(r.max_tokens == plain.max_tokens);
    CHECK(r.sampling.temperature == plain.sampling.temperature);
    CHECK(r.sampling.top_p == plain.sampling.top_p);
    CHECK(r.sampling.has_seed == plain.sampling.has_seed);
    CHECK(r.logprobs == plain.logprobs);
    CHECK(r.ignored_fields.empty());
  }
}

TEST_CASE("api request: max_completion_tokens wins over max_tokens, and null gives way",
          "[admission]") {
  ordered_json body = chat_body({{{"role", "user"}, {"content", "Hi"}}});
  body["max_tokens"] = 2;
  body["max_completion_tokens"] = nullptr;
  CHECK(chat(body).max_tokens == 2);
  body["max_completion_tokens"] = 3;
  CHECK(chat(body).max_tokens == 3);
  body.erase("max_tokens");
  CHECK(chat(body).max_tokens == 3);
}

TEST_CASE("api request: unknown fields are ignored and listed", "[admission]") {
  ordered_json body = chat_body({{{"role", "user"}, {"content", "Hi"}}});
  const std::vector<std::string> unknown = {"reasoning_effort", "prompt_cache_key",
                                            "safety_identifier", "verbosity", "prediction",
                                            "modalities", "store", "metadata", "user"};
  for (const auto& f : unknown) body[f] = "x";
  const api_request r = chat(body);
  std::vector<std::string> listed = r.ignored_fields;
  std::sort(listed.begin(), listed.end());
  std::vector<std::string> expected = unknown;
  std::sort(expected.begin(), expected.end());
  CHECK(listed == expected);
  const std::string completion = R"({"model": "tiny-qwen3", "prompt": "Hi", "user": "x"})";
  CHECK(parse_api_request(endpoint::completions, completion, ctx()).ignored_fields ==
        std::vector<std::string>{"user"});
}

// vLLM's and OpenAI's fields that change the output: until courier acts on one, a value other
// than its default is a 400 naming it (the default, or null, passes).
TEST_CASE("api request: a field with a meaning courier does not act on is a 400 naming it",
          "[admission]") {
  const std::vector<std::tuple<endpoint, const char*, ordered_json, ordered_json>> fields = {
      {endpoint::completions, "suffix", "end", ""},
  };
  for (const auto& [kind, field, refused, neutral] : fields) {
    INFO(field);
    ordered_json body = kind == endpoint::chat
                            ? chat_body({{{"role", "user"}, {"content", "Hi"}}})
                            : ordered_json{{"model", "tiny-qwen3"}, {"prompt", "Hi"}};
    body[field] = refused;
    const api_error e = error_of(kind, body.dump());
    CHECK(e.status == 400);
    CHECK(e.param == field);
    body[field] = neutral;
    CHECK(error_of(kind, body.dump()).status == 0);
    body[field] = nullptr;
    CHECK(error_of(kind, body.dump()).status == 0);
  }
  ordered_json legacy = chat_body({{{"role", "user"}, {"content", "Hi"}}});
  const ordered_json f = {{"name", "f"}, {"parameters", ordered_json::object()}};
  legacy["functions"] = ordered_json::array({f});
  CHECK(error_of(endpoint::chat, legacy.dump()).param == "functions");
  legacy.erase("functions");
  legacy["function_call"] = "auto";
  CHECK(error_of(endpoint::chat, legacy.dump()).param == "function_call");
}

// vLLM's min_tokens: 0..the budget (max_tokens, max_completion_tokens, or what the context
// leaves), on both endpoints; anything else a 400 naming it.
TEST_CASE("api request: min_tokens is taken up to the budget and refused past it", "[admission]") {
  ordered_json chat_req = chat_body({{{"role", "user"}, {"content", "Hi"}}});
  chat_req["min_tokens"] = 5;
  chat_req["max_completion_tokens"] = 5;
  CHECK(chat(chat_req).sampling.min_tokens == 5);
  chat_req["min_tokens"] = 6;
  api_error e = error_of(endpoint::chat, chat_req.dump());
  CHECK(e.status == 400);
  CHECK(e.param == "min_tokens");
  CHECK_THAT(std::string(e.what()), Catch::Contains("max_completion_tokens (5), got 6"));
  chat_req.erase("max_completion_tokens");  // the budget is what the context leaves
  chat_req.erase("min_tokens");
  const std::int32_t left = chat(chat_req).max_tokens;
  chat_req["min_tokens"] = left;
  CHECK(chat(chat_req).sampling.min_tokens == left);
  chat_req["min_tokens"] = left + 1;
  CHECK(error_of(endpoint::chat, chat_req.dump()).param == "min_tokens");
  chat_req["min_tokens"] = -1;
  CHECK(error_of(endpoint::chat, chat_req.dump()).param == "min_tokens");
  chat_req["min_tokens"] = "3";
  CHECK(error_of(endpoint::chat, chat_req.dump()).param == "min_tokens");
  chat_req["min_tokens"] = nullptr;
  CHECK(chat(chat_req).sampling.min_tokens == 0);
  ordered_json completion = {{"model", "tiny-qwen3"}, {"prompt", "Hi"}, {"min_tokens", 16}};
  CHECK(parse_api_request(endpoint::completions, completion.dump(), ctx()).sampling.min_tokens ==
        16);  // the default budget is 16
  completion["min_tokens"] = 17;
  e = error_of(endpoint::completions, completion.dump());
  CHECK(e.param == "min_tokens");
  CHECK_THAT(std::string(e.what()), Catch::Contains("max_tokens (16), got 17"));
}

TEST_CASE("api request: numbers beyond a double are a 400 naming the field", "[admission]") {
  for (const char* field : {"temperature", "top_p", "max_tokens", "seed", "n", "frequency_penalty"}) {
    const std::string body = R"({"model": "tiny-qwen3", "messages": [{"role": "user", "content": "Hi"}], ")" +
                             std::string(field) + R"(": 1e400})";
    const api_error e = error_of(endpoint::chat, body);
    INFO(field);
    CHECK(e.status == 400);
    CHECK(e.param == field);
  }
  const api_error e = error_of(
      endpoint::chat,
      R"({"model": "tiny-qwen3", "messages": [{"role": "user", "content": "Hi"}], "temperature": -1e400})");
  CHECK(e.status == 400);
  CHECK(e.param == "temperature");
}

TEST_CASE("api request: logit_bias is token id -> bias in [-100, 100], sorted by token",
          "[admission]") {
  ordered_json body = chat_body({{{"role", "user"}, {"content", "Hi"}}});
  body["logit_bias"] = {{"9", 5}, {"10", -100}, {"151935", 100}};
  const api_request r = chat(body);
  CHECK(r.sampling.logit_bias_tokens == std::vector<msg::token_id>{9, 10, 151935});
  CHECK(r.sampling.logit_bias_values == std::vector<float>{5, -100, 100});
  const std::vector<std::pair<ordered_json, const char*>> bad = {
      {{{"151936", 1}}, "not a token id"},
      {{{"-1", 1}}, "not a token id"},
      {{{"abc", 1}}, "not a token id"},
      {{{"12x", 1}}, "not a token id"},
      {{{"5", 101}}, "[-100, 100]"},
      {{{"5", "high"}}, "[-100, 100]"},
      {ordered_json::array({1, 2}), "expected an object"},
  };
  for (const auto& [value, mentions] : bad) {
    body["logit_bias"] = value;
    const api_error e = error_of(endpoint::chat, body.dump());
    INFO(value.dump());
    CHECK(e.status == 400);
    CHECK(e.param == "logit_bias");
    CHECK_THAT(e.what(), Catch::Contains(mentions));
  }
  ordered_json many = ordered_json::object();
  for (int i = 0; i <= static_cast<int>(max_logit_bias_entries); ++i) many[std::to_string(i)] = 1;
  body["logit_bias"] = many;
  CHECK(error_of(endpoint::chat, body.dump()).status == 400);
}

TEST_CASE("api request: chat_template_kwargs only adds template variables", "[admission]") {
  ordered_json body = chat_body({{{"role", "user"}, {"content", "Hi"}}});
  const auto plain = chat(body).prompts;
  body["chat_template_kwargs"] = {{"enable_thinking", false}};
  const auto no_thinking = chat(body).prompts.at(0);
  CHECK(no_thinking ==
        prompt_of("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"));
  CHECK(no_thinking != plain.at(0));
  for (const char* key : {"messages", "add_generation_prompt", "tools", "bos_token", "max_tokens"}) {
    body["chat_template_kwargs"] = {{key, ordered_json::array()}};
    const api_error e = error_of(endpoint::chat, body.dump());
    INFO(key);
    CHECK(e.status == 400);
    CHECK(e.param == "chat_template_kwargs");
  }
}

// vLLM's continue_final_message, after transformers' apply_chat_template: the prompt is the
// rendering without a generation prompt, cut right after the final assistant message's text, so
// that the answer continues it (a prefill).
TEST_CASE("api request: continue_final_message ends the prompt inside the final assistant "
          "message",
          "[admission]") {
  const ordered_json messages = {{{"role", "user"}, {"content", "Answer in JSON."}},
                                 {{"role", "assistant"}, {"content", "{\"answer\":"}}};
  ordered_json body = chat_body(messages);
  body["continue_final_message"] = true;
  const std::string prompt = ctx().tok->decode(chat(body).prompts.at(0));
  const std::string tail = "{\"answer\":";
  REQUIRE(prompt.size() > tail.size());
  CHECK(prompt.compare(prompt.size() - tail.size(), tail.size(), tail) == 0);
  body.erase("continue_final_message");
  body["add_generation_prompt"] = false;
  const std::string closed = ctx().tok->decode(chat(body).prompts.at(0));
  CHECK(closed.compare(0, prompt.size(), prompt) == 0);  // the closed turn, cut
  CHECK_THAT(closed.substr(prompt.size()), Catch::StartsWith("<|im_end|>"));
  // A final message of text parts: their text.
  const ordered_json sure = ordered_json::array({{{"type", "text"}, {"text", "Sure"}}});
  ordered_json parts = chat_body({messages[0], {{"role", "assistant"}, {"content", sure}}});
  parts["continue_final_message"] = true;
  CHECK_THAT(ctx().tok->decode(chat(parts).prompts.at(0)), Catch::EndsWith("Sure"));
  // Refused: with a generation prompt asked for too, or without a final assistant text.
  body = chat_body(messages);
  body["continue_final_message"] = true;
  body["add_generation_prompt"] = true;
  CHECK(error_of(endpoint::chat, body.dump()).param == "continue_final_message");
  body.erase("add_generation_prompt");
  body["messages"] = ordered_json::array({messages[0]});
  CHECK(error_of(endpoint::chat, body.dump()).param == "continue_final_message");
  body["messages"] = {messages[0], {{"role", "assistant"}, {"content", ""}}};
  CHECK(error_of(endpoint::chat, body.dump()).param == "continue_final_message");
}

TEST_CASE("api request: more than server.max_sequences_per_request prompts x n is a 400",
          "[admission]") {
  auto c = qwen_context();
  c->max_sequences_per_request = 8;
  const std::string two_prompts = R"({"model": "tiny-qwen3", "prompt": ["a", "b"], "n": 4})";
  CHECK(error_of(endpoint::completions, two_prompts, *c).status == 0);
  const std::string too_many = R"({"model": "tiny-qwen3", "prompt": ["a", "b", "c"], "n": 4})";
  const api_error e = error_of(endpoint::completions, too_many, *c);
  CHECK(e.status == 400);
  CHECK_THAT(e.what(), Catch::Contains("max_sequences_per_request"));
  ordered_json prompts = ordered_json::array();
  for (int i = 0; i < 9; ++i) prompts.push_back("p");
  const ordered_json body = {{"model", "tiny-qwen3"}, {"prompt", prompts}};
  CHECK(error_of(endpoint::completions, body.dump(), *c).status == 400);
  // One prompt of token ids is one sequence however long it is.
  const ordered_json ids = {{"model", "tiny-qwen3"}, {"prompt", std::vector<int>(100, 7)}};
  CHECK(error_of(endpoint::completions, ids.dump(), *c).status == 0);
}

TEST_CASE("api request: n above server.max_n is a 400 naming the key; the config sets it",
          "[admission]") {
  auto n_body = [](int n) {
    return ordered_json{{"model", "tiny-qwen3"}, {"prompt", "a"}, {"n", n}}.dump();
  };
  CHECK(error_of(endpoint::completions, n_body(16)).status == 0);  // the default, 16
  CHECK(error_of(endpoint::completions, n_body(17)).status == 400);
  auto c = qwen_context();
  config::server_config cfg;
  cfg.server.max_n = 3;
  msg::engine_ready ready;
  ready.model_name = "tiny-qwen3";
  ready.max_model_len = 4096;
  ready.vocab_size = 151936;
  configure_context(*c, cfg, ready);
  CHECK(error_of(endpoint::completions, n_body(3), *c).status == 0);
  const api_error e = error_of(endpoint::completions, n_body(4), *c);
  CHECK(e.status == 400);
  CHECK(e.param == "n");
  CHECK_THAT(e.what(), Catch::Contains("[1, 3] (server.max_n)"));
}

TEST_CASE("admission context: server.responses_store_mb makes the response store; 0 keeps none",
          "[admission]") {
  msg::engine_ready ready;
  ready.model_name = "tiny-qwen3";
  ready.max_model_len = 4096;
  ready.vocab_size = 151936;
  auto c = qwen_context();
  config::server_config cfg;
  cfg.server.responses_store_mb = 1;
  cfg.server.responses_store_s = 60;
  configure_context(*c, cfg, ready);
  REQUIRE(c->responses);
  // 1 MiB: a response of 600 KiB is kept, a second one pushes it out, one of 1.1 MiB is not.
  const auto response = [](const char* id, std::size_t bytes) {
    return ordered_json{
        {"id", id}, {"output", ordered_json::array()}, {"pad", std::string(bytes, 'x')}};
  };
  CHECK(c->responses->keep("t", response("resp_a", 600 << 10), ordered_json::array()));
  CHECK(c->responses->keep("t", response("resp_b", 600 << 10), ordered_json::array()));
  CHECK(c->responses->size() == 1);
  CHECK_FALSE(c->responses->keep("t", response("resp_c", 1100 << 10), ordered_json::array()));
  cfg.server.responses_store_mb = 0;
  auto off = qwen_context();
  configure_context(*off, cfg, ready);
  CHECK_FALSE(off->responses);
}

TEST_CASE("api request: a prompt whose bytes prove it too long is refused before tokenizing",
          "[admission]") {
  auto c = qwen_context();
  c->max_model_len = 64;
  REQUIRE(c->max_text_bytes_per_id > 0);
  const std::string text(64 * c->max_text_bytes_per_id, 'a');
  const ordered_json body = {{"model", "tiny-qwen3"}, {"prompt", text}};
  const api_error e = error_of(endpoint::completions, body.dump(), *c);
  CHECK(e.status == 400);
  CHECK(e.code == "context_length_exceeded");
  CHECK_THAT(e.what(), Catch::Contains("bytes of text"));
  // The bound is sound: the text does tokenize to more than max_model_len tokens.
  CHECK(c->tok->encode(text).size() > 64);
  // A prompt just within the bound is tokenized, and refused by its real length if too long.
  const std::string shorter(64 * c->max_text_bytes_per_id - 1, 'a');
  const api_error by_tokens =
      error_of(endpoint::completions, ordered_json({{"model", "tiny-qwen3"}, {"prompt", shorter}}).dump(), *c);
  CHECK(by_tokens.status == 400);
  CHECK_THAT(by_tokens.what(), !Catch::Contains("bytes of text"));
  // Tokenizing stops past max_model_len ids, so the count is a lower bound.
  CHECK_THAT(by_tokens.what(), Catch::Contains("the prompt has 65 or more"));
  // One token fewer than the limit is accepted.
  const ordered_json fits = {{"model", "tiny-qwen3"}, {"prompt", std::string(63 * 4, ' ') + "x"}};
  CHECK(c->tok->encode(fits["prompt"].get<std::string>()).size() < 64);
  CHECK(error_of(endpoint::completions, fits.dump(), *c).status == 0);
}

TEST_CASE("api request: errors carry OpenAI's string codes", "[admission]") {
  const api_error missing = error_of(endpoint::chat, R"({"model": "gpt-9", "messages": []})");
  CHECK(missing.status == 404);
  CHECK(missing.code == "model_not_found");
  CHECK(missing.to_json()["error"]["code"] == "model_not_found");
  // OpenAI's type for it, as GET /v1/models/{id} gives (Anthropic's shape: not_found_error).
  CHECK(missing.to_json()["error"]["type"] == "invalid_request_error");
  const api_error plain_400 = error_of(endpoint::chat, R"({"model": "tiny-qwen3", "messages": 5})");
  CHECK(plain_400.status == 400);
  CHECK(plain_400.to_json()["error"]["code"].is_null());
}

}  // namespace courier_test_actors_admission_api_request
