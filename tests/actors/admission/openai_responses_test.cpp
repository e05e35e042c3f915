// OpenAI Responses bodies translated to chat-completions bodies (every field, item histories,
// the stateful fields and the 400s naming their field), chat responses and chunks translated
// back (whole response objects, the typed SSE event sequence, errors), against JSON written
// out by hand.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "actors/admission/openai_responses.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_openai_responses {

using namespace courier::admission;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

ordered_json body(ordered_json input) {
  return {{"model", "m"}, {"input", std::move(input)}};
}

// The 400 a body gets (status 0 when it is accepted).
api_error error_of(const ordered_json& b) {
  try {
    responses_to_chat_request(b);
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

// SSE text as (event name, data); every event's data names the same type, and the sequence
// numbers count from 0.
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
    CHECK(out.back().second["sequence_number"] == out.size() - 1);
    at = end + 2;
  }
  return out;
}

std::vector<std::string> names(const std::vector<std::pair<std::string, json>>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.first);
  return out;
}

// The concatenated `delta` of the events named `name`.
std::string deltas(const std::vector<std::pair<std::string, json>>& events, const std::string& name,
                   int output_index) {
  std::string out;
  for (const auto& [n, e] : events) {
    if (n == name && e["output_index"] == output_index) out += e["delta"].get<std::string>();
  }
  return out;
}

json plain(const ordered_json& j) {
  return json::parse(j.dump());
}

}  // namespace

TEST_CASE("responses request: a string input, instructions and the sampling fields",
          "[admission]") {
  const ordered_json b = {{"model", "m"},
                          {"instructions", "Be brief."},
                          {"input", "Hi"},
                          {"max_output_tokens", 64},
                          {"temperature", 0.5},
                          {"top_p", 0.9},
                          {"stream", true},
                          {"store", true},
                          {"metadata", {{"k", "v"}}},
                          {"reasoning", {{"effort", "low"}}},
                          {"truncation", "auto"},
                          {"include", ordered_json::array()},
                          {"user", "u1"}};
  const ordered_json expected = {
      {"model", "m"},
      {"messages",
       {{{"role", "system"}, {"content", "Be brief."}}, {{"role", "user"}, {"content", "Hi"}}}},
      {"max_tokens", 64},
      {"temperature", 0.5},
      {"top_p", 0.9},
      {"stream", true},
      {"stream_options", {{"include_usage", true}}}};
  CHECK(responses_to_chat_request(b).dump() == expected.dump());
  CHECK(responses_to_chat_request(body("Hi")).dump() ==
        R"({"model":"m","messages":[{"role":"user","content":"Hi"}]})");
}

TEST_CASE("responses request: message items, function calls and their outputs", "[admission]") {
  const ordered_json b = body(
      {{{"role", "developer"}, {"content", "Use tools."}},
       {{"type", "message"},
        {"role", "user"},
        {"content",
         {{{"type", "input_text"}, {"text", "Weather in"}},
          {{"type", "input_text"}, {"text", "Paris and Rome?"}}}}},
       {{"type", "reasoning"}, {"id", "rs_1"}, {"summary", ordered_json::array()}},
       {{"type", "message"},
        {"id", "msg_1"},
        {"status", "completed"},
        {"role", "assistant"},
        {"content",
         {{{"type", "output_text"},
           {"text", "Checking."},
           {"annotations", ordered_json::array()}}}}},
       {{"type", "function_call"},
        {"call_id", "call_1"},
        {"name", "weather"},
        {"arguments", R"({"city":"Paris"})"}},
       {{"type", "function_call"},
        {"id", "fc_2"},
        {"call_id", "call_2"},
        {"name", "weather"},
        {"arguments", R"({"city":"Rome"})"},
        {"status", "completed"}},
       {{"type", "function_call_output"}, {"call_id", "call_1"}, {"output", "18C"}},
       {{"type", "function_call_output"},
        {"call_id", "call_2"},
        {"output", {{{"type", "input_text"}, {"text", "21C"}}}}},
       {{"type", "function_call"}, {"call_id", "call_3"}, {"name", "now"}, {"arguments", "{}"}}});
  const ordered_json expected = {
      {{"role", "system"}, {"content", "Use tools."}},
      {{"role", "user"},
       {"content",
        {{{"type", "text"}, {"text", "Weather in"}},
         {{"type", "text"}, {"text", "Paris and Rome?"}}}}},
      {{"role", "assistant"},
       {"content", {{{"type", "text"}, {"text", "Checking."}}}},
       {"tool_calls",
        {{{"id", "call_1"},
          {"type", "function"},
          {"function", {{"name", "weather"}, {"arguments", R"({"city":"Paris"})"}}}},
         {{"id", "call_2"},
          {"type", "function"},
          {"function", {{"name", "weather"}, {"arguments", R"({"city":"Rome"})"}}}}}}},
      {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "18C"}},
      {{"role", "tool"},
       {"tool_call_id", "call_2"},
       {"content", {{{"type", "text"}, {"text", "21C"}}}}},
      {{"role", "assistant"},
       {"content", nullptr},
       {"tool_calls",
        {{{"id", "call_3"},
          {"type", "function"},
          {"function", {{"name", "now"}, {"arguments", "{}"}}}}}}}};
  CHECK(responses_to_chat_request(b)["messages"].dump() == expected.dump());
}

// The API reference: `text` holds an optional `format` (default {"type": "text"}) and an optional
// `verbosity` (low, medium or high). LangChain's ChatOpenAI({useResponsesApi: true}) sends
// "text": {}.
TEST_CASE("responses request: a text without a format is plain text; verbosity is low, medium "
          "or high",
          "[admission]") {
  for (const ordered_json& text : {ordered_json::object(), ordered_json{{"verbosity", "low"}},
                                   ordered_json{{"format", nullptr}, {"verbosity", nullptr}}}) {
    INFO(text.dump());
    ordered_json b = body("Hi");
    b["text"] = text;
    CHECK_FALSE(responses_to_chat_request(b).contains("response_format"));
  }
  ordered_json b = body("Hi");
  b["text"] = {{"format", {{"type", "text"}}}, {"verbosity", "medium"}};
  CHECK(responses_to_chat_request(b)["response_format"] == ordered_json{{"type", "text"}});
  b["text"] = {{"verbosity", "terse"}};
  CHECK(error_of(b).param == "text.verbosity");
  b["text"] = {{"format", {{"type", "json_object"}}}, {"verbosity", 1}};
  CHECK(error_of(b).param == "text.verbosity");
  b["text"] = "json";
  CHECK(error_of(b).param == "text");
  b["text"] = {{"format", "json_object"}};
  CHECK(error_of(b).param == "text.format");
}

TEST_CASE("responses request: tools, tool_choice and text formats", "[admission]") {
  ordered_json b = body("Hi");
  b["tools"] = {{{"type", "function"},
                 {"name", "weather"},
                 {"description", "Current weather"},
                 {"parameters",
                  {{"type", "object"},
                   {"properties", {{"zip", {{"type", "string"}}}, {"city", {{"type", "string"}}}}},
                   {"required", {"zip"}}}},
                 {"strict", true}},
                {{"type", "function"}, {"name", "now"}, {"parameters", nullptr}}};
  b["tool_choice"] = {{"type", "function"}, {"name", "weather"}};
  b["parallel_tool_calls"] = false;
  b["text"] = {{"format",
                {{"type", "json_schema"},
                 {"name", "answer"},
                 {"schema",
                  {{"type", "object"},
                   {"properties", {{"b", {{"type", "integer"}}}, {"a", {{"type", "string"}}}}}}},
                 {"strict", true}}}};
  const ordered_json out = responses_to_chat_request(b);
  const ordered_json tools = {
      {{"type", "function"},
       {"function",
        {{"name", "weather"},
         {"description", "Current weather"},
         {"parameters",
          {{"type", "object"},
           {"properties", {{"zip", {{"type", "string"}}}, {"city", {{"type", "string"}}}}},
           {"required", {"zip"}}}},
         {"strict", true}}}},
      {{"type", "function"}, {"function", {{"name", "now"}}}}};
  CHECK(out["tools"].dump() == tools.dump());
  CHECK(out["tool_choice"].dump() == R"({"type":"function","function":{"name":"weather"}})");
  CHECK(out["parallel_tool_calls"] == false);
  CHECK(out["response_format"].dump() ==
        R"({"type":"json_schema","json_schema":{"name":"answer","schema":{"type":"object",)"
        R"("properties":{"b":{"type":"integer"},"a":{"type":"string"}}},"strict":true}})");

  for (const char* choice : {"auto", "none", "required"}) {
    b["tool_choice"] = choice;
    CHECK(responses_to_chat_request(b)["tool_choice"] == choice);
  }
  b["text"] = {{"format", {{"type", "json_object"}}}};
  CHECK(responses_to_chat_request(b)["response_format"].dump() == R"({"type":"json_object"})");
  b["text"] = {{"format", {{"type", "text"}}}, {"verbosity", "low"}};
  CHECK(responses_to_chat_request(b)["response_format"].dump() == R"({"type":"text"})");
}

TEST_CASE("responses request: whatever needs stored state is a 400 naming the field",
          "[admission]") {
  ordered_json b = body("Hi");
  b["previous_response_id"] = "resp_123";  // nothing is kept (no stored_responses)
  const api_error e = error_of(b);
  CHECK(e.status == 400);
  CHECK(e.param == "previous_response_id");
  CHECK(std::string(e.what()).find("server.responses_store_mb") != std::string::npos);
  b = body("Hi");
  b["conversation"] = "conv_1";
  CHECK(error_of(b).param == "conversation");
  b = body("Hi");
  b["background"] = true;
  CHECK(error_of(b).param == "background");
  b["background"] = false;
  CHECK(error_of(b).status == 0);
  b = body("Hi");
  b["prompt"] = {{"id", "pmpt_1"}};
  CHECK(error_of(b).param == "prompt");
  b = body("Hi");
  b["store"] = "yes";
  CHECK(error_of(b).param == "store");
  CHECK(error_of(body({{{"type", "item_reference"}, {"id", "msg_1"}}})).param == "input[0].id");
}

TEST_CASE("responses request: previous_response_id continues what is kept; an item_reference "
          "is the kept item", "[admission]") {
  // What a store holds, written out: one response's conversation and its output items.
  const ordered_json earlier = ordered_json::parse(R"([
      {"type": "message", "role": "user", "content": "Weather in Paris?"},
      {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "weather",
       "arguments": "{\"city\":\"Paris\"}", "status": "completed"}])");
  const ordered_json message = ordered_json::parse(R"(
      {"type": "message", "id": "msg_9", "role": "assistant", "status": "completed",
       "content": [{"type": "output_text", "text": "Sunny.", "annotations": []}]})");
  stored_responses kept;
  kept.continued = [&](const std::string& id) -> std::optional<ordered_json> {
    if (id == "resp_1") return earlier;
    return std::nullopt;
  };
  kept.item = [&](const std::string& id) -> std::optional<ordered_json> {
    if (id == "msg_9") return message;
    return std::nullopt;
  };
  ordered_json b = {{"model", "m"},
                    {"instructions", "Be brief."},
                    {"previous_response_id", "resp_1"},
                    {"input",
                     {{{"type", "function_call_output"}, {"call_id", "call_1"}, {"output", "18C"}},
                      {{"type", "item_reference"}, {"id", "msg_9"}},
                      {{"role", "user"}, {"content", "Thanks"}}}}};
  const responses_input in = responses_conversation(b, &kept);
  CHECK(in.continued == 2);
  REQUIRE(in.items.size() == 5);
  CHECK(in.items[3] == message);
  const ordered_json expected = ordered_json::parse(R"([
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": "Weather in Paris?"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
       "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "18C"},
      {"role": "assistant", "content": [{"type": "text", "text": "Sunny."}]},
      {"role": "user", "content": "Thanks"}])");
  CHECK(responses_to_chat_request(b, in)["messages"].dump() == expected.dump());

  // A string input follows the kept items as one user message.
  b["input"] = "More?";
  const responses_input more = responses_conversation(b, &kept);
  REQUIRE(more.items.size() == 3);
  CHECK(more.items[2] ==
        ordered_json({{"type", "message"}, {"role", "user"}, {"content", "More?"}}));

  // Ids nothing is kept under are 400s naming the field; an item of the body's own input is
  // named by its index there, after the kept ones.
  const auto param_of = [&](const ordered_json& body) {
    try {
      responses_to_chat_request(body, responses_conversation(body, &kept));
    } catch (const api_error& e) {
      CHECK(e.status == 400);
      return e.param;
    }
    return std::string("accepted");
  };
  b["previous_response_id"] = "resp_2";
  CHECK(param_of(b) == "previous_response_id");
  b["previous_response_id"] = "resp_1";
  b["input"] = {{{"role", "user"}, {"content", "a"}}, {{"type", "item_reference"}, {"id", "x"}}};
  CHECK(param_of(b) == "input[1].id");
  b["input"] = {{{"role", "user"}, {"content", "a"}}, {{"role", "robot"}, {"content", "b"}}};
  CHECK(param_of(b) == "input[1].role");
}

TEST_CASE("responses request: a bad body is a 400 naming the field", "[admission]") {
  const auto param_of = [](const ordered_json& b) {
    const api_error e = error_of(b);
    CHECK(e.status == 400);
    return e.param;
  };
  CHECK(param_of({{"model", "m"}}) == "input");
  CHECK(param_of({{"input", "Hi"}}) == "model");
  CHECK(param_of(body(42)) == "input");
  CHECK(param_of(body(ordered_json::array())) == "input");
  const ordered_json image = {{"type", "input_image"}, {"image_url", "http://x/y.png"}};
  const api_error media = error_of(
      body({{{"role", "user"}, {"content", {{{"type", "input_text"}, {"text", "look"}}, image}}}}));
  CHECK(media.param == "input[0].content[1]");
  CHECK(std::string(media.what()).find("text only") != std::string::npos);
  CHECK(param_of(body({{{"type", "function_call_output"},
                        {"call_id", "c"},
                        {"output", {{{"type", "input_file"}, {"file_id", "f"}}}}}})) ==
        "input[0].output[0]");
  CHECK(param_of(body({{{"role", "tool"}, {"content", "x"}}})) == "input[0].role");
  CHECK(param_of(body({{{"role", "user"}}})) == "input[0].content");
  CHECK(param_of(body({{{"type", "function_call"}, {"name", "f"}, {"arguments", "{}"}}})) ==
        "input[0].call_id");
  CHECK(param_of(body({{{"type", "web_search_call"}, {"id", "ws_1"}}})) == "input[0].type");
  CHECK(param_of(body({{{"content", "no role, no type"}}})) == "input[0].type");

  ordered_json b = body("Hi");
  b["tools"] = {{{"type", "function"}, {"name", "f"}}, {{"type", "web_search"}}};
  const api_error tool = error_of(b);
  CHECK(tool.param == "tools[1].type");
  CHECK(std::string(tool.what()).find("web_search") != std::string::npos);
  b["tools"] = {{{"type", "function"}}};
  CHECK(param_of(b) == "tools[0].name");
  b.erase("tools");
  b["tool_choice"] = {{"type", "web_search_preview"}};
  CHECK(param_of(b) == "tool_choice.type");
  b["tool_choice"] = "sometimes";
  CHECK(param_of(b) == "tool_choice");
  b.erase("tool_choice");
  b["text"] = {{"format", {{"type", "yaml"}}}};
  CHECK(param_of(b) == "text.format.type");
  b["text"] = {{"format", {{"type", "json_schema"}, {"name", "x"}}}};
  CHECK(param_of(b) == "text.format.schema");
  b.erase("text");
  b["max_output_tokens"] = 0;
  CHECK(param_of(b) == "max_output_tokens");
  b["max_output_tokens"] = nullptr;  // null is "not given"
  CHECK(error_of(b).status == 0);
  b["stream"] = 1;
  CHECK(param_of(b) == "stream");
}

TEST_CASE("responses response: text only, with the request's fields echoed", "[admission]") {
  const ordered_json request = {{"model", "m"},
                                {"input", "Hi"},
                                {"instructions", "Be brief."},
                                {"temperature", 0.5},
                                {"metadata", {{"k", "v"}}}};
  const json chat = chat_response({{"role", "assistant"}, {"content", "Hello!"}}, "stop");
  const json expected = json::parse(R"({
    "id": "resp_abc", "object": "response", "created_at": 123, "status": "completed",
    "background": false, "error": null, "incomplete_details": null,
    "instructions": "Be brief.", "max_output_tokens": null, "model": "m",
    "output": [{"type": "message", "id": "msg_abc", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": "Hello!", "annotations": []}]}],
    "parallel_tool_calls": true, "previous_response_id": null, "reasoning": null,
    "store": false, "temperature": 0.5, "text": {"format": {"type": "text"}},
    "tool_choice": "auto", "tools": [], "top_p": null, "truncation": "disabled",
    "usage": {"input_tokens": 9, "input_tokens_details": {"cached_tokens": 4},
              "output_tokens": 12, "output_tokens_details": {"reasoning_tokens": 0},
              "total_tokens": 21},
    "metadata": {"k": "v"}})");
  CHECK(plain(chat_to_responses_response(chat, request)) == expected);
}

TEST_CASE("responses response: reasoning, text and tool calls are items in that order",
          "[admission]") {
  const json calls = {{{"id", "call_1"},
                       {"type", "function"},
                       {"function", {{"name", "weather"}, {"arguments", R"({"city":"Paris"})"}}}},
                      {{"id", "call_2"},
                       {"type", "function"},
                       {"function", {{"name", "now"}, {"arguments", "{}"}}}}};
  const json chat = chat_response({{"role", "assistant"},
                                   {"content", "Checking."},
                                   {"reasoning_content", "two calls"},
                                   {"tool_calls", calls}},
                                  "tool_calls");
  const json out = plain(chat_to_responses_response(chat, body("Hi")));
  CHECK(out["status"] == "completed");
  CHECK(out["output"] == json::parse(R"([
    {"type": "reasoning", "id": "rs_abc", "summary": [],
     "content": [{"type": "reasoning_text", "text": "two calls"}]},
    {"type": "message", "id": "msg_abc", "status": "completed", "role": "assistant",
     "content": [{"type": "output_text", "text": "Checking.", "annotations": []}]},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "weather",
     "arguments": "{\"city\":\"Paris\"}", "status": "completed"},
    {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "now",
     "arguments": "{}", "status": "completed"}])"));
}

TEST_CASE("responses response: a length finish is incomplete, and so is the last item",
          "[admission]") {
  const json chat = chat_response(
      {{"role", "assistant"}, {"content", "Once upon"}, {"reasoning_content", "a story"}},
      "length");
  const json out = plain(chat_to_responses_response(chat, body("Hi")));
  CHECK(out["status"] == "incomplete");
  CHECK(out["incomplete_details"] == json::parse(R"({"reason": "max_output_tokens"})"));
  CHECK(out["output"][1]["status"] == "incomplete");
}

TEST_CASE("responses stream: text in pieces gives the typed events, then the whole response",
          "[admission]") {
  const ordered_json request = {{"model", "m"}, {"input", "Hi"}, {"stream", true}};
  responses_stream s("chatcmpl-abc", 123, "m", request);
  std::string sse = s.on_chunk(chunk({{"role", "assistant"}, {"content", ""}}));
  sse += s.on_chunk(chunk({{"content", "Hel"}}));
  sse += s.on_chunk(chunk({{"content", "lo"}}));
  sse += s.on_chunk(chunk({{"content", "!"}}));
  sse += s.on_chunk(chunk(json::object(), "stop"));
  sse += s.on_chunk(usage_chunk());
  sse += s.finish();
  const auto events = events_of(sse);
  CHECK(names(events) ==
        std::vector<std::string>{
            "response.created", "response.in_progress", "response.output_item.added",
            "response.content_part.added", "response.output_text.delta",
            "response.output_text.delta", "response.output_text.delta", "response.output_text.done",
            "response.content_part.done", "response.output_item.done", "response.completed"});
  const json& created = events[0].second["response"];
  CHECK(created["status"] == "in_progress");
  CHECK(created["output"] == json::array());
  CHECK(created["usage"] == nullptr);
  CHECK(created["id"] == "resp_abc");
  CHECK(events[2].second == json::parse(R"({"type": "response.output_item.added",
      "output_index": 0, "sequence_number": 2, "item": {"type": "message", "id": "msg_abc",
      "status": "in_progress", "role": "assistant", "content": []}})"));
  CHECK(events[3].second == json::parse(R"({"type": "response.content_part.added",
      "item_id": "msg_abc", "output_index": 0, "content_index": 0, "sequence_number": 3,
      "part": {"type": "output_text", "text": "", "annotations": []}})"));
  CHECK(events[4].second == json::parse(R"({"type": "response.output_text.delta",
      "item_id": "msg_abc", "output_index": 0, "content_index": 0, "delta": "Hel",
      "logprobs": [], "sequence_number": 4})"));
  CHECK(deltas(events, "response.output_text.delta", 0) == "Hello!");
  CHECK(events[7].second["text"] == "Hello!");
  CHECK(events[9].second["item"] ==
        json::parse(R"({"type": "message", "id": "msg_abc", "status": "completed",
      "role": "assistant", "content": [{"type": "output_text", "text": "Hello!",
      "annotations": []}]})"));
  const json whole = chat_response({{"role", "assistant"}, {"content", "Hello!"}}, "stop");
  CHECK(events[10].second["response"] == plain(chat_to_responses_response(whole, request)));
}

TEST_CASE("responses stream: reasoning, then content, then two calls with arguments in pieces",
          "[admission]") {
  const ordered_json request = body("Weather?");
  responses_stream s("chatcmpl-abc", 123, "m", request);
  std::string sse = s.on_chunk(chunk({{"role", "assistant"}, {"reasoning_content", "two "}}));
  sse += s.on_chunk(chunk({{"reasoning_content", "calls"}}));
  sse += s.on_chunk(chunk({{"content", "Checking."}}));
  sse += s.on_chunk(chunk(call_delta(0, "call_1", "weather", "")));
  sse += s.on_chunk(chunk(call_delta(0, "", "", R"({"city":)")));
  sse += s.on_chunk(chunk(call_delta(0, "", "", R"("Paris"})")));
  sse += s.on_chunk(chunk(call_delta(1, "call_2", "now", "{")));
  sse += s.on_chunk(chunk(call_delta(1, "", "", "}"), "tool_calls"));
  sse += s.on_chunk(usage_chunk());
  sse += s.finish();
  const auto events = events_of(sse);
  CHECK(
      names(events) ==
      std::vector<std::string>{
          "response.created", "response.in_progress",
          // reasoning
          "response.output_item.added", "response.content_part.added",
          "response.reasoning_text.delta", "response.reasoning_text.delta",
          "response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
          // message
          "response.output_item.added", "response.content_part.added", "response.output_text.delta",
          "response.output_text.done", "response.content_part.done", "response.output_item.done",
          // call_1
          "response.output_item.added", "response.function_call_arguments.delta",
          "response.function_call_arguments.delta", "response.function_call_arguments.done",
          "response.output_item.done",
          // call_2
          "response.output_item.added", "response.function_call_arguments.delta",
          "response.function_call_arguments.delta", "response.function_call_arguments.done",
          "response.output_item.done", "response.completed"});
  CHECK(events[2].second["item"] ==
        json::parse(R"({"type": "reasoning", "id": "rs_abc", "summary": [], "content": []})"));
  CHECK(events[3].second["part"] == json::parse(R"({"type": "reasoning_text", "text": ""})"));
  CHECK(deltas(events, "response.reasoning_text.delta", 0) == "two calls");
  CHECK(events[6].second["text"] == "two calls");
  CHECK(events[15].second == json::parse(R"({"type": "response.output_item.added",
      "output_index": 2, "sequence_number": 15, "item": {"type": "function_call", "id": "fc_1",
      "call_id": "call_1", "name": "weather", "arguments": "", "status": "in_progress"}})"));
  CHECK(events[16].second == json::parse(R"({"type": "response.function_call_arguments.delta",
      "item_id": "fc_1", "output_index": 2, "delta": "{\"city\":", "sequence_number": 16})"));
  CHECK(deltas(events, "response.function_call_arguments.delta", 2) == R"({"city":"Paris"})");
  CHECK(deltas(events, "response.function_call_arguments.delta", 3) == "{}");
  CHECK(events[18].second == json::parse(R"({"type": "response.function_call_arguments.done",
      "item_id": "fc_1", "output_index": 2, "name": "weather",
      "arguments": "{\"city\":\"Paris\"}", "sequence_number": 18})"));
  const json calls = {{{"id", "call_1"},
                       {"type", "function"},
                       {"function", {{"name", "weather"}, {"arguments", R"({"city":"Paris"})"}}}},
                      {{"id", "call_2"},
                       {"type", "function"},
                       {"function", {{"name", "now"}, {"arguments", "{}"}}}}};
  const json whole = chat_response({{"role", "assistant"},
                                    {"content", "Checking."},
                                    {"reasoning_content", "two calls"},
                                    {"tool_calls", calls}},
                                   "tool_calls");
  CHECK(events.back().second["response"] == plain(chat_to_responses_response(whole, request)));
}

TEST_CASE("responses stream: a length finish ends with response.incomplete", "[admission]") {
  const ordered_json request = body("Hi");
  responses_stream s("chatcmpl-abc", 123, "m", request);
  std::string sse = s.on_chunk(chunk({{"role", "assistant"}, {"content", "Once"}}));
  sse += s.on_chunk(chunk({{"content", " upon"}}, "length"));
  sse += s.on_chunk(usage_chunk());
  sse += s.finish();
  const auto events = events_of(sse);
  REQUIRE(events.back().first == "response.incomplete");
  CHECK(events[events.size() - 2].second["item"]["status"] == "incomplete");
  const json whole = chat_response({{"role", "assistant"}, {"content", "Once upon"}}, "length");
  CHECK(events.back().second["response"] == plain(chat_to_responses_response(whole, request)));
}

TEST_CASE("responses stream: an error chunk is one error event and ends the stream",
          "[admission]") {
  responses_stream s("chatcmpl-abc", 123, "m", body("Hi"));
  std::string sse = s.on_chunk(chunk({{"role", "assistant"}, {"content", "Hi"}}));
  sse += s.on_chunk({{"error",
                      {{"message", "the engine failed"},
                       {"type", "server_error"},
                       {"param", nullptr},
                       {"code", nullptr}}}});
  const auto events = events_of(sse);
  REQUIRE(events.size() == 6);
  CHECK(events.back().second == json::parse(R"({"type": "error", "code": "server_error",
      "message": "the engine failed", "param": null, "sequence_number": 5})"));
  CHECK(s.on_chunk(chunk({{"content", "more"}})).empty());
  CHECK(s.finish().empty());
}

}  // namespace courier_test_actors_admission_openai_responses
