// Anthropic Messages bodies translated to chat-completions bodies (every field, tool histories,
// interleaved tool results, the 400s naming their field), chat responses and chunks translated
// back (whole messages, the SSE event sequence, errors), against JSON written out by hand.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "actors/admission/anthropic_messages.hpp"
#include "actors/admission/api_format.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_anthropic_messages {

using namespace courier::admission;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

ordered_json body(ordered_json messages) {
  return {{"model", "m"}, {"max_tokens", 64}, {"messages", std::move(messages)}};
}

// A list of JSON values as an array. `f({x})` with x a JSON value is that one-element array
// through these overloads: as an ordered_json parameter, Clang copy-initializes it from x
// (CWG 2137) where GCC makes the array.
ordered_json array_of(std::initializer_list<ordered_json> items) {
  ordered_json a = ordered_json::array();
  for (const ordered_json& x : items) a.push_back(x);
  return a;
}

ordered_json body(std::initializer_list<ordered_json> messages) { return body(array_of(messages)); }

ordered_json user(ordered_json content) {
  return {{"role", "user"}, {"content", content}};
}

ordered_json user(std::initializer_list<ordered_json> blocks) { return user(array_of(blocks)); }

ordered_json text(const std::string& t) {
  return {{"type", "text"}, {"text", t}};
}

// The messages of the chat body a request becomes.
ordered_json messages_of(const ordered_json& b) {
  return anthropic_to_chat_request(b)["messages"];
}

// The 400 a body gets (status 0 when it is accepted).
api_error error_of(const ordered_json& b) {
  try {
    anthropic_to_chat_request(b);
  } catch (const api_error& e) {
    return e;
  }
  return api_error(0, "accepted");
}

json chat_response(json message, const std::string& finish) {
  return {{"id", "chatcmpl-abc"},
          {"object", "chat.completion"},
          {"created", 123},
          {"model", "m"},
          {"choices", {{{"index", 0}, {"finish_reason", finish}, {"message", message}}}},
          {"usage",
           {{"prompt_tokens", 9},
            {"completion_tokens", 12},
            {"total_tokens", 21},
            {"prompt_tokens_details", {{"cached_tokens", 4}}}}}};
}

json chunk(json delta, json finish = nullptr) {
  return {{"id", "chatcmpl-abc"},
          {"object", "chat.completion.chunk"},
          {"created", 123},
          {"model", "m"},
          {"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}}}};
}

json usage_chunk() {
  return {{"id", "chatcmpl-abc"},
          {"object", "chat.completion.chunk"},
          {"created", 123},
          {"model", "m"},
          {"choices", json::array()},
          {"usage",
           {{"prompt_tokens", 9},
            {"completion_tokens", 12},
            {"total_tokens", 21},
            {"prompt_tokens_details", {{"cached_tokens", 4}}}}}};
}

json call_delta(int index, const std::string& id, const std::string& name,
                const std::string& args) {
  json tc = {{"index", index}, {"function", {{"arguments", args}}}};
  if (!id.empty()) {
    tc["id"] = id;
    tc["type"] = "function";
    tc["function"]["name"] = name;
  }
  return {{"tool_calls", {tc}}};
}

// SSE text as (event name, data); every event's data names the same type.
std::vector<std::pair<std::string, json>> events_of(const std::string& sse) {
  std::vector<std::pair<std::string, json>> out;
  std::size_t at = 0;
  while (at < sse.size()) {
    const std::size_t end = sse.find("\n\n", at);
    REQUIRE(end != std::string::npos);
    const std::string ev = sse.substr(at, end - at);
    REQUIRE(ev.rfind("event: ", 0) == 0);
    const std::size_t nl = ev.find('\n');
    REQUIRE(ev.compare(nl + 1, 6, "data: ") == 0);
    out.emplace_back(ev.substr(7, nl - 7), json::parse(ev.substr(nl + 7)));
    CHECK(out.back().second["type"] == out.back().first);
    at = end + 2;
  }
  return out;
}

std::vector<std::string> names(const std::vector<std::pair<std::string, json>>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.first);
  return out;
}

// What the Anthropic SDKs build from the events: the message of message_start, its blocks from
// content_block_start and the deltas, the stop reason and usage of message_delta.
json accumulate(const std::vector<std::pair<std::string, json>>& events) {
  json msg;
  std::vector<std::string> partial_json;
  for (const auto& [name, e] : events) {
    if (name == "message_start") {
      msg = e["message"];
    } else if (name == "content_block_start") {
      REQUIRE(e["index"] == msg["content"].size());
      msg["content"].push_back(e["content_block"]);
      partial_json.emplace_back();
    } else if (name == "content_block_delta") {
      json& block = msg["content"][e["index"].get<std::size_t>()];
      const json& d = e["delta"];
      if (d["type"] == "text_delta")
        block["text"] = block["text"].get<std::string>() + d["text"].get<std::string>();
      if (d["type"] == "thinking_delta") {
        block["thinking"] = block["thinking"].get<std::string>() + d["thinking"].get<std::string>();
      }
      if (d["type"] == "input_json_delta") {
        partial_json[e["index"].get<std::size_t>()] += d["partial_json"].get<std::string>();
      }
    } else if (name == "content_block_stop") {
      const std::string& args = partial_json[e["index"].get<std::size_t>()];
      if (!args.empty()) msg["content"][e["index"].get<std::size_t>()]["input"] = json::parse(args);
    } else if (name == "message_delta") {
      msg["stop_reason"] = e["delta"]["stop_reason"];
      msg["stop_sequence"] = e["delta"]["stop_sequence"];
      msg["usage"].update(e["usage"]);
    }
  }
  return msg;
}

json plain(const ordered_json& j) {
  return json::parse(j.dump());
}

}  // namespace

TEST_CASE("anthropic request: system, messages and sampling fields map onto a chat body",
          "[admission]") {
  const ordered_json b = {{"model", "m"},
                          {"max_tokens", 64},
                          {"system", "Be brief."},
                          {"messages",
                           {user("Hi"),
                            {{"role", "assistant"}, {"content", "Hello"}},
                            user({text("Two"), text("parts")})}},
                          {"temperature", 0.5},
                          {"top_p", 0.9},
                          {"top_k", 40},
                          {"stop_sequences", {"END", "STOP"}},
                          {"stream", true},
                          {"metadata", {{"user_id", "u1"}}},
                          {"thinking", {{"type", "enabled"}, {"budget_tokens", 1024}}}};
  const ordered_json expected = {
      {"model", "m"},
      {"messages",
       {{{"role", "system"}, {"content", "Be brief."}},
        {{"role", "user"}, {"content", "Hi"}},
        {{"role", "assistant"}, {"content", "Hello"}},
        {{"role", "user"},
         {"content",
          {{{"type", "text"}, {"text", "Two"}}, {{"type", "text"}, {"text", "parts"}}}}}}},
      {"max_tokens", 64},
      {"temperature", 0.5},
      {"top_p", 0.9},
      {"top_k", 40},
      {"stop", {"END", "STOP"}},
      {"stream", true},
      {"stream_options", {{"include_usage", true}}}};
  CHECK(anthropic_to_chat_request(b).dump() == expected.dump());
}

TEST_CASE("anthropic request: only the fields given are set; a system of blocks becomes parts",
          "[admission]") {
  ordered_json b = body({user("Hi")});
  b["system"] = {text("One"), text("Two")};
  b["stream"] = false;
  b["temperature"] = nullptr;  // null is "not given"
  const ordered_json expected = {
      {"model", "m"},
      {"messages",
       {{{"role", "system"},
         {"content", {{{"type", "text"}, {"text", "One"}}, {{"type", "text"}, {"text", "Two"}}}}},
        {{"role", "user"}, {"content", "Hi"}}}},
      {"max_tokens", 64},
      {"stream", false}};
  CHECK(anthropic_to_chat_request(b).dump() == expected.dump());
}

TEST_CASE("anthropic request: tool_use blocks are tool calls, tool_result blocks tool messages",
          "[admission]") {
  const ordered_json b =
      body({user("Weather in Paris and Rome?"),
            {{"role", "assistant"},
             {"content",
              {{{"type", "thinking"}, {"thinking", "two calls"}, {"signature", "sig"}},
               text("Checking."),
               {{"type", "tool_use"},
                {"id", "toolu_1"},
                {"name", "weather"},
                {"input", {{"city", "Paris"}, {"units", "c"}}}},
               {{"type", "tool_use"},
                {"id", "toolu_2"},
                {"name", "weather"},
                {"input", {{"city", "Rome"}}}},
               {{"type", "redacted_thinking"}, {"data", "xyz"}}}}},
            user({{{"type", "tool_result"}, {"tool_use_id", "toolu_1"}, {"content", "18C"}},
                  {{"type", "tool_result"},
                   {"tool_use_id", "toolu_2"},
                   {"content", {text("21C"), text("sunny")}},
                   {"is_error", false}}}),
            {{"role", "assistant"},
             {"content",
              {{{"type", "tool_use"},
                {"id", "toolu_3"},
                {"name", "now"},
                {"input", ordered_json::object()}}}}}});
  const ordered_json expected = {
      {{"role", "user"}, {"content", "Weather in Paris and Rome?"}},
      {{"role", "assistant"},
       {"content", {{{"type", "text"}, {"text", "Checking."}}}},
       {"tool_calls",
        {{{"id", "toolu_1"},
          {"type", "function"},
          {"function", {{"name", "weather"}, {"arguments", R"({"city":"Paris","units":"c"})"}}}},
         {{"id", "toolu_2"},
          {"type", "function"},
          {"function", {{"name", "weather"}, {"arguments", R"({"city":"Rome"})"}}}}}}},
      {{"role", "tool"}, {"tool_call_id", "toolu_1"}, {"content", "18C"}},
      {{"role", "tool"},
       {"tool_call_id", "toolu_2"},
       {"content", {{{"type", "text"}, {"text", "21C"}}, {{"type", "text"}, {"text", "sunny"}}}}},
      {{"role", "assistant"},
       {"content", nullptr},
       {"tool_calls",
        {{{"id", "toolu_3"},
          {"type", "function"},
          {"function", {{"name", "now"}, {"arguments", "{}"}}}}}}}};
  CHECK(messages_of(b).dump() == expected.dump());
}

TEST_CASE("anthropic request: text blocks around tool results stay where they are, in order",
          "[admission]") {
  const ordered_json b =
      body({user({text("A"),
                  {{"type", "tool_result"}, {"tool_use_id", "t1"}, {"content", "r1"}},
                  text("B"),
                  text("C"),
                  {{"type", "tool_result"}, {"tool_use_id", "t2"}},
                  text("D")})});
  const ordered_json expected = {
      {{"role", "user"}, {"content", {{{"type", "text"}, {"text", "A"}}}}},
      {{"role", "tool"}, {"tool_call_id", "t1"}, {"content", "r1"}},
      {{"role", "user"},
       {"content", {{{"type", "text"}, {"text", "B"}}, {{"type", "text"}, {"text", "C"}}}}},
      {{"role", "tool"}, {"tool_call_id", "t2"}, {"content", ""}},
      {{"role", "user"}, {"content", {{{"type", "text"}, {"text", "D"}}}}}};
  CHECK(messages_of(b).dump() == expected.dump());
}

TEST_CASE("anthropic request: tools keep their schema's key order; tool_choice maps each type",
          "[admission]") {
  ordered_json b = body({user("Hi")});
  b["tools"] = {{{"name", "weather"},
                 {"description", "Current weather"},
                 {"input_schema",
                  {{"type", "object"},
                   {"properties", {{"zip", {{"type", "string"}}}, {"city", {{"type", "string"}}}}},
                   {"required", {"zip"}}}}},
                {{"type", "custom"}, {"name", "now"}, {"input_schema", {{"type", "object"}}}}};
  b["tool_choice"] = {{"type", "auto"}};
  const ordered_json out = anthropic_to_chat_request(b);
  const ordered_json tools = {
      {{"type", "function"},
       {"function",
        {{"name", "weather"},
         {"description", "Current weather"},
         {"parameters",
          {{"type", "object"},
           {"properties", {{"zip", {{"type", "string"}}}, {"city", {{"type", "string"}}}}},
           {"required", {"zip"}}}}}}},
      {{"type", "function"},
       {"function", {{"name", "now"}, {"parameters", {{"type", "object"}}}}}}};
  CHECK(out["tools"].dump() == tools.dump());
  CHECK(out["tool_choice"] == "auto");
  CHECK_FALSE(out.contains("parallel_tool_calls"));

  b["tool_choice"] = {{"type", "any"}};
  CHECK(anthropic_to_chat_request(b)["tool_choice"] == "required");
  b["tool_choice"] = {{"type", "none"}};
  CHECK(anthropic_to_chat_request(b)["tool_choice"] == "none");
  b["tool_choice"] = {{"type", "tool"}, {"name", "weather"}, {"disable_parallel_tool_use", true}};
  const ordered_json named = anthropic_to_chat_request(b);
  CHECK(named["tool_choice"].dump() == R"({"type":"function","function":{"name":"weather"}})");
  CHECK(named["parallel_tool_calls"] == false);
  b["tool_choice"] = {{"type", "auto"}, {"disable_parallel_tool_use", false}};
  CHECK(anthropic_to_chat_request(b)["parallel_tool_calls"] == true);
}

// Anthropic's prefill: a final assistant message is the start of the answer, which continues it.
TEST_CASE("anthropic request: a final assistant message is a prefill the answer continues",
          "[admission]") {
  ordered_json b = {{"model", "m"},
                    {"max_tokens", 8},
                    {"system", "Be terse."},
                    {"messages",
                     {{{"role", "user"}, {"content", "JSON please"}},
                      {{"role", "assistant"}, {"content", "{\"answer\":"}}}}};
  CHECK(anthropic_to_chat_request(b)["continue_final_message"] == true);
  b["messages"][1]["content"] = array_of({text("{\"answer\":")});
  CHECK(anthropic_to_chat_request(b)["continue_final_message"] == true);
  b["messages"][1]["content"] = "{\"answer\": ";  // Anthropic refuses trailing whitespace
  const api_error e = error_of(b);
  CHECK(e.status == 400);
  CHECK(e.param == "messages[1].content");
  b["messages"] = array_of({user("JSON please")});
  CHECK_FALSE(anthropic_to_chat_request(b).contains("continue_final_message"));
}

// Anthropic's structured outputs: output_config.format {"type": "json_schema", "schema": S}
// (the beta's top-level output_format too) constrains the text to S, as chat's strict
// response_format json_schema does; effort is a hint to Anthropic's models, checked.
TEST_CASE("anthropic request: output_config.format is a strict json_schema response_format",
          "[admission]") {
  const ordered_json schema = {{"type", "object"},
                               {"properties", {{"answer", {{"type", "integer"}}}}},
                               {"required", ordered_json::array({"answer"})},
                               {"additionalProperties", false}};
  ordered_json b = body({user("2+2?")});
  b["output_config"] = {{"format", {{"type", "json_schema"}, {"schema", schema}}},
                        {"effort", "low"}};
  const ordered_json chat = anthropic_to_chat_request(b);
  CHECK(chat["response_format"]["type"] == "json_schema");
  CHECK(chat["response_format"]["json_schema"]["schema"] == schema);
  CHECK(chat["response_format"]["json_schema"]["strict"] == true);
  CHECK(chat["response_format"]["json_schema"]["schema"].dump() == schema.dump());  // key order
  b.erase("output_config");
  CHECK_FALSE(anthropic_to_chat_request(b).contains("response_format"));
  b["output_config"] = {{"effort", "high"}};  // no format: free text
  CHECK_FALSE(anthropic_to_chat_request(b).contains("response_format"));
  b["output_config"] = {{"format", nullptr}};
  CHECK_FALSE(anthropic_to_chat_request(b).contains("response_format"));
  b.erase("output_config");
  b["output_format"] = {{"type", "json_schema"}, {"schema", schema}};  // the beta's name
  CHECK(anthropic_to_chat_request(b)["response_format"]["json_schema"]["schema"] == schema);

  const auto param_of = [](const ordered_json& bad) {
    const api_error e = error_of(bad);
    CHECK(e.status == 400);
    return e.param;
  };
  b["output_config"] = {{"format", {{"type", "json_schema"}, {"schema", schema}}}};
  CHECK(param_of(b) == "output_format");  // both
  b.erase("output_format");
  b["output_config"]["format"]["type"] = "text";
  CHECK(param_of(b) == "output_config.format.type");
  b["output_config"]["format"] = {{"type", "json_schema"}};
  CHECK(param_of(b) == "output_config.format.schema");
  b["output_config"]["format"] = "json";
  CHECK(param_of(b) == "output_config.format");
  b["output_config"] = {{"effort", "extreme"}};
  CHECK(param_of(b) == "output_config.effort");
  b["output_config"] = "fast";
  CHECK(param_of(b) == "output_config");
}

// The chat body's parser names chat's fields; a client of another API hears its own names.
TEST_CASE("api errors: a field of the translated chat body is named as the client sent it",
          "[admission]") {
  const api_error schema(400, "'response_format.json_schema.schema': json schema: unknown type",
                         "response_format.json_schema.schema");
  const json anthropic = error_body(api_format::anthropic, schema, "req_1");
  CHECK(anthropic["error"]["message"] ==
        "'output_config.format.schema': json schema: unknown type");
  CHECK(anthropic["request_id"] == "req_1");
  const json responses = error_body(api_format::responses, schema);
  CHECK(responses["error"]["param"] == "text.format.schema");
  CHECK(responses["error"]["message"] == "'text.format.schema': json schema: unknown type");
  CHECK(error_body(api_format::openai, schema)["error"]["param"] ==
        "response_format.json_schema.schema");
  CHECK(client_field(api_format::anthropic, "stop[2]") == "stop_sequences[2]");
  CHECK(client_field(api_format::anthropic, "stop_sequences[2]") == "stop_sequences[2]");
  CHECK(client_field(api_format::responses, "max_tokens") == "max_output_tokens");
  CHECK(client_field(api_format::anthropic, "max_tokens") == "max_tokens");
  CHECK(client_field(api_format::anthropic, "response_formats") == "response_formats");
}

TEST_CASE("anthropic request: a bad body is a 400 naming the field", "[admission]") {
  const auto param_of = [](const ordered_json& b) {
    const api_error e = error_of(b);
    CHECK(e.status == 400);
    return e.param;
  };
  ordered_json b = body({user("Hi")});
  b.erase("max_tokens");
  CHECK(param_of(b) == "max_tokens");
  b["max_tokens"] = 0;
  CHECK(param_of(b) == "max_tokens");
  b["max_tokens"] = "8";
  CHECK(param_of(b) == "max_tokens");
  CHECK(param_of({{"max_tokens", 8}, {"messages", {user("Hi")}}}) == "model");
  CHECK(param_of(body(ordered_json::array())) == "messages");

  const ordered_json image = {{"type", "image"},
                              {"source", {{"type", "url"}, {"url", "http://x/y.png"}}}};
  const api_error media = error_of(body({user({text("look"), image})}));
  CHECK(media.param == "messages[0].content[1]");
  CHECK(std::string(media.what()).find("text only") != std::string::npos);
  const ordered_json doc = {{"type", "document"}, {"source", {{"type", "text"}, {"data", "x"}}}};
  CHECK(param_of(
            body({user({{{"type", "tool_result"}, {"tool_use_id", "t"}, {"content", {doc}}}})})) ==
        "messages[0].content[0].content[0]");

  CHECK(param_of(body({{{"role", "system"}, {"content", "x"}}})) == "messages[0].role");
  CHECK(param_of(body({user(ordered_json::array())})) == "messages[0].content");
  CHECK(param_of(body({user(42)})) == "messages[0].content");
  CHECK(param_of(body({user({{{"type", "tool_use"},
                              {"id", "t"},
                              {"name", "f"},
                              {"input", ordered_json::object()}}})})) ==
        "messages[0].content[0].type");
  CHECK(param_of(body({{{"role", "assistant"},
                        {"content", {{{"type", "tool_result"}, {"tool_use_id", "t"}}}}}})) ==
        "messages[0].content[0].type");
  CHECK(param_of(body({user({{{"type", "tool_result"}}})})) ==
        "messages[0].content[0].tool_use_id");
  CHECK(
      param_of(body(
          {{{"role", "assistant"},
            {"content", {{{"type", "tool_use"}, {"id", "t"}, {"name", "f"}, {"input", "x"}}}}}})) ==
      "messages[0].content[0].input");
  CHECK(param_of(body({user({{{"text", "no type"}}})})) == "messages[0].content[0].type");

  b = body({user("Hi")});
  b["stop_sequences"] = {"ok", 3};
  CHECK(param_of(b) == "stop_sequences[1]");
  b = body({user("Hi")});
  b["stream"] = "yes";
  CHECK(param_of(b) == "stream");
  b = body({user("Hi")});
  b["tools"] = {{{"type", "web_search_20250305"}, {"name", "web_search"}}};
  const api_error server_tool = error_of(b);
  CHECK(server_tool.param == "tools[0].type");
  CHECK(std::string(server_tool.what()).find("web_search_20250305") != std::string::npos);
  b["tools"] = {{{"name", "f"}}};
  CHECK(param_of(b) == "tools[0].input_schema");
  b.erase("tools");
  b["tool_choice"] = {{"type", "tool"}};
  CHECK(param_of(b) == "tool_choice.name");
  b["tool_choice"] = {{"type", "sometimes"}};
  CHECK(param_of(b) == "tool_choice.type");
  b["tool_choice"] = "auto";
  CHECK(param_of(b) == "tool_choice");
}

TEST_CASE("anthropic response: text only", "[admission]") {
  const json chat = chat_response({{"role", "assistant"}, {"content", "Hello!"}}, "stop");
  const json expected = {{"id", "msg_abc"},
                         {"type", "message"},
                         {"role", "assistant"},
                         {"model", "m"},
                         {"content", {{{"type", "text"}, {"text", "Hello!"}}}},
                         {"stop_reason", "end_turn"},
                         {"stop_sequence", nullptr},
                         {"usage",
                          {{"input_tokens", 5},
                           {"cache_creation_input_tokens", 0},
                           {"cache_read_input_tokens", 4},
                           {"output_tokens", 12}}}};
  CHECK(plain(chat_to_anthropic_response(chat)) == expected);
}

TEST_CASE("anthropic response: reasoning is a thinking block; a matched stop string is named",
          "[admission]") {
  const json chat = chat_response(
      {{"role", "assistant"}, {"content", "42"}, {"reasoning_content", "6 times 7"}}, "stop");
  const json out = plain(chat_to_anthropic_response(chat, std::string("END")));
  CHECK(out["content"] == json::parse(R"([{"type":"thinking","thinking":"6 times 7","signature":""},
                                          {"type":"text","text":"42"}])"));
  CHECK(out["stop_reason"] == "stop_sequence");
  CHECK(out["stop_sequence"] == "END");
}

TEST_CASE("anthropic response: tool calls are tool_use blocks with their input parsed",
          "[admission]") {
  const json calls = {{{"id", "call_1"},
                       {"type", "function"},
                       {"function", {{"name", "weather"}, {"arguments", R"({"city":"Paris"})"}}}},
                      {{"id", "call_2"},
                       {"type", "function"},
                       {"function", {{"name", "now"}, {"arguments", "{\"cut"}}}}};
  const json chat = chat_response(
      {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", calls}}, "tool_calls");
  const json out = plain(chat_to_anthropic_response(chat));
  CHECK(out["content"] == json::parse(R"([
      {"type":"tool_use","id":"toolu_1","name":"weather","input":{"city":"Paris"}},
      {"type":"tool_use","id":"toolu_2","name":"now","input":{}}])"));
  CHECK(out["stop_reason"] == "tool_use");
}

TEST_CASE("anthropic response: a length finish is max_tokens", "[admission]") {
  const json chat = chat_response({{"role", "assistant"}, {"content", "Once upon"}}, "length");
  CHECK(chat_to_anthropic_response(chat)["stop_reason"] == "max_tokens");
}

TEST_CASE("anthropic error: OpenAI errors keep their message under Anthropic's type",
          "[admission]") {
  const json openai = {{"error",
                        {{"message", "'max_tokens': too many"},
                         {"type", "invalid_request_error"},
                         {"param", "max_tokens"},
                         {"code", nullptr}}}};
  CHECK(anthropic_error(400, openai) ==
        json::parse(R"({"type":"error","error":{"type":"invalid_request_error",
                        "message":"'max_tokens': too many"}})"));
  const std::vector<std::pair<int, std::string>> types = {
      {401, "authentication_error"}, {404, "not_found_error"},  {429, "rate_limit_error"},
      {503, "overloaded_error"},     {529, "overloaded_error"}, {500, "api_error"}};
  for (const auto& [status, type] : types) {
    CHECK(anthropic_error(status, openai)["error"]["type"] == type);
  }
  // A context overflow in Anthropic's words, which LangChain's ChatAnthropic looks for.
  const json overflow = {{"error",
                          {{"message", "this model's maximum context length is 512 tokens"},
                           {"type", "invalid_request_error"},
                           {"param", "messages"},
                           {"code", "context_length_exceeded"}}}};
  CHECK(anthropic_error(400, overflow)["error"]["message"] ==
        "prompt is too long: this model's maximum context length is 512 tokens");
}

TEST_CASE("anthropic stream: text in pieces, then the usage, gives Anthropic's event sequence",
          "[admission]") {
  anthropic_stream s("chatcmpl-abc", "m", 9);
  std::string sse = s.on_chunk(chunk({{"role", "assistant"}, {"content", ""}}));
  sse += s.on_chunk(chunk({{"content", "Hel"}}));
  sse += s.on_chunk(chunk({{"content", "lo"}}));
  sse += s.on_chunk(chunk({{"content", "!"}}));
  sse += s.on_chunk(chunk(json::object(), "stop"));
  sse += s.on_chunk(usage_chunk());
  sse += s.finish();
  const auto events = events_of(sse);
  CHECK(names(events) == std::vector<std::string>{"message_start", "content_block_start",
                                                  "content_block_delta", "content_block_delta",
                                                  "content_block_delta", "content_block_stop",
                                                  "message_delta", "message_stop"});
  CHECK(events[0].second == json::parse(R"({"type":"message_start","message":{"id":"msg_abc",
      "type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,
      "stop_sequence":null,"usage":{"input_tokens":9,"cache_creation_input_tokens":0,
      "cache_read_input_tokens":0,"output_tokens":0}}})"));
  CHECK(events[1].second == json::parse(R"({"type":"content_block_start","index":0,
                                            "content_block":{"type":"text","text":""}})"));
  CHECK(events[2].second == json::parse(R"({"type":"content_block_delta","index":0,
                                            "delta":{"type":"text_delta","text":"Hel"}})"));
  CHECK(events[5].second == json::parse(R"({"type":"content_block_stop","index":0})"));
  CHECK(events[6].second == json::parse(R"({"type":"message_delta",
      "delta":{"stop_reason":"end_turn","stop_sequence":null},
      "usage":{"input_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":4,
               "output_tokens":12}})"));
  CHECK(events[7].second == json::parse(R"({"type":"message_stop"})"));
  const json whole = chat_response({{"role", "assistant"}, {"content", "Hello!"}}, "stop");
  CHECK(accumulate(events) == plain(chat_to_anthropic_response(whole)));
}

TEST_CASE("anthropic stream: reasoning then content are a thinking block then a text block",
          "[admission]") {
  anthropic_stream s("chatcmpl-abc", "m");
  std::string sse = s.on_chunk(chunk({{"role", "assistant"}, {"reasoning_content", "6 times"}}));
  sse += s.on_chunk(chunk({{"reasoning_content", " 7"}}));
  sse += s.on_chunk(chunk({{"content", "4"}}));
  sse += s.on_chunk(chunk({{"content", "2"}}, "stop"));
  sse += s.on_chunk(usage_chunk());
  sse += s.finish(std::string("END"));
  const auto events = events_of(sse);
  CHECK(names(events) ==
        std::vector<std::string>{"message_start", "content_block_start", "content_block_delta",
                                 "content_block_delta", "content_block_stop", "content_block_start",
                                 "content_block_delta", "content_block_delta", "content_block_stop",
                                 "message_delta", "message_stop"});
  CHECK(events[1].second["content_block"] ==
        json::parse(R"({"type":"thinking","thinking":"","signature":""})"));
  CHECK(events[2].second["delta"] ==
        json::parse(R"({"type":"thinking_delta","thinking":"6 times"})"));
  CHECK(events[5].second["index"] == 1);
  CHECK(events[9].second["delta"] ==
        json::parse(R"({"stop_reason":"stop_sequence","stop_sequence":"END"})"));
  const json whole = chat_response(
      {{"role", "assistant"}, {"content", "42"}, {"reasoning_content", "6 times 7"}}, "stop");
  CHECK(accumulate(events) == plain(chat_to_anthropic_response(whole, std::string("END"))));
}

TEST_CASE("anthropic stream: two tool calls with their arguments in pieces are tool_use blocks",
          "[admission]") {
  anthropic_stream s("chatcmpl-abc", "m");
  std::string sse = s.on_chunk(chunk({{"role", "assistant"}, {"content", "Checking."}}));
  sse += s.on_chunk(chunk(call_delta(0, "call_1", "weather", "")));
  sse += s.on_chunk(chunk(call_delta(0, "", "", R"({"city":)")));
  sse += s.on_chunk(chunk(call_delta(0, "", "", R"("Paris"})")));
  sse += s.on_chunk(chunk(call_delta(1, "call_2", "now", "{")));
  sse += s.on_chunk(chunk(call_delta(1, "", "", "}")));
  sse += s.on_chunk(chunk(json::object(), "tool_calls"));
  sse += s.on_chunk(usage_chunk());
  sse += s.finish();
  const auto events = events_of(sse);
  CHECK(names(events) ==
        std::vector<std::string>{"message_start", "content_block_start", "content_block_delta",
                                 "content_block_stop", "content_block_start", "content_block_delta",
                                 "content_block_delta", "content_block_stop", "content_block_start",
                                 "content_block_delta", "content_block_delta", "content_block_stop",
                                 "message_delta", "message_stop"});
  CHECK(events[4].second == json::parse(R"({"type":"content_block_start","index":1,
      "content_block":{"type":"tool_use","id":"toolu_1","name":"weather","input":{}}})"));
  CHECK(events[5].second == json::parse(R"({"type":"content_block_delta","index":1,
      "delta":{"type":"input_json_delta","partial_json":"{\"city\":"}})"));
  CHECK(events[8].second["content_block"]["id"] == "toolu_2");
  CHECK(events[12].second["delta"]["stop_reason"] == "tool_use");
  const json calls = {{{"id", "call_1"},
                       {"type", "function"},
                       {"function", {{"name", "weather"}, {"arguments", R"({"city":"Paris"})"}}}},
                      {{"id", "call_2"},
                       {"type", "function"},
                       {"function", {{"name", "now"}, {"arguments", "{}"}}}}};
  const json whole = chat_response(
      {{"role", "assistant"}, {"content", "Checking."}, {"tool_calls", calls}}, "tool_calls");
  CHECK(accumulate(events) == plain(chat_to_anthropic_response(whole)));
}

TEST_CASE("anthropic stream: an error chunk is one error event and ends the stream",
          "[admission]") {
  anthropic_stream s("chatcmpl-abc", "m");
  std::string sse = s.on_chunk(chunk({{"role", "assistant"}, {"content", "Hi"}}));
  sse += s.on_chunk({{"error",
                      {{"message", "the engine failed"},
                       {"type", "server_error"},
                       {"param", nullptr},
                       {"code", nullptr}}}});
  const auto events = events_of(sse);
  CHECK(names(events) == std::vector<std::string>{"message_start", "content_block_start",
                                                  "content_block_delta", "error"});
  CHECK(events.back().second ==
        json::parse(
            R"({"type":"error","error":{"type":"api_error","message":"the engine failed"}})"));
  CHECK(s.on_chunk(chunk({{"content", "more"}})).empty());
  CHECK(s.finish().empty());

  anthropic_stream overloaded("chatcmpl-abc", "m");
  const auto first = events_of(overloaded.on_chunk({{"error",
                                                     {{"message", "busy"},
                                                      {"type", "server_overloaded"},
                                                      {"param", nullptr},
                                                      {"code", nullptr}}}}));
  REQUIRE(first.size() == 1);
  CHECK(first[0].second["error"]["type"] == "overloaded_error");
}

}  // namespace courier_test_actors_admission_anthropic_messages
