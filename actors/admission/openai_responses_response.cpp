#include "actors/admission/openai_responses.hpp"

#include "actors/admission/api_translate.hpp"
#include "actors/admission/openai_responses_internal.hpp"

namespace courier::admission {

using namespace translate;  // the helpers these translators share

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

ordered_json echo(const ordered_json& request, const char* key, ordered_json absent) {
  const ordered_json* v = given(request, key);
  return v ? *v : absent;
}

}  // namespace

std::string call_item_id(const std::string& call_id) {
  return "fc_" + (call_id.rfind("call_", 0) == 0 ? call_id.substr(5) : call_id);
}

ordered_json output_text(const std::string& text) {
  return {{"type", "output_text"}, {"text", text}, {"annotations", ordered_json::array()}};
}

ordered_json reasoning_text(const std::string& text) {
  return {{"type", "reasoning_text"}, {"text", text}};
}

ordered_json item_json(const item& it, bool added) {
  const std::string status = added ? "in_progress" : it.status;
  ordered_json content = ordered_json::array();
  switch (it.kind) {
    case item_kind::reasoning:
      if (!added) content.push_back(reasoning_text(it.text));
      return {{"type", "reasoning"},
              {"id", it.id},
              {"summary", ordered_json::array()},
              {"content", std::move(content)}};
    case item_kind::message:
      if (!added) content.push_back(output_text(it.text));
      return {{"type", "message"},
              {"id", it.id},
              {"status", status},
              {"role", "assistant"},
              {"content", std::move(content)}};
    case item_kind::function_call:
      return {{"type", "function_call"},
              {"id", it.id},
              {"call_id", it.call_id},
              {"name", it.name},
              {"arguments", added ? "" : it.text},
              {"status", status}};
  }
  return nullptr;
}

ordered_json responses_usage(const json& u) {
  const std::int64_t prompt = count(u, "prompt_tokens"), completion = count(u, "completion_tokens");
  return {{"input_tokens", prompt},
          {"input_tokens_details",
           {{"cached_tokens", count(member(u, "prompt_tokens_details"), "cached_tokens")}}},
          {"output_tokens", completion},
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", prompt + completion}};
}

ordered_json response_json(const std::string& key, std::int64_t created, const std::string& model,
                           const std::string& status, const std::vector<item>& items,
                           ordered_json usage, const ordered_json& request) {
  ordered_json output = ordered_json::array();
  for (const item& it : items) output.push_back(item_json(it, false));
  const ordered_json incomplete = {{"reason", "max_output_tokens"}};
  return {{"id", "resp_" + key},
          {"object", "response"},
          {"created_at", created},
          {"status", status},
          {"background", false},
          {"error", nullptr},
          {"incomplete_details", status == "incomplete" ? incomplete : ordered_json(nullptr)},
          {"instructions", echo(request, "instructions", nullptr)},
          {"max_output_tokens", echo(request, "max_output_tokens", nullptr)},
          {"model", model},
          {"output", std::move(output)},
          {"parallel_tool_calls", echo(request, "parallel_tool_calls", true)},
          {"previous_response_id", echo(request, "previous_response_id", nullptr)},
          {"reasoning", nullptr},
          {"store", echo(request, "store", false)},
          {"temperature", echo(request, "temperature", nullptr)},
          {"text", echo(request, "text", {{"format", {{"type", "text"}}}})},
          {"tool_choice", echo(request, "tool_choice", "auto")},
          {"tools", echo(request, "tools", ordered_json::array())},
          {"top_p", echo(request, "top_p", nullptr)},
          {"truncation", "disabled"},
          {"usage", std::move(usage)},
          {"metadata", echo(request, "metadata", ordered_json::object())}};
}

const char* response_status(const std::string& finish_reason) {
  return finish_reason == "length" ? "incomplete" : "completed";
}

ordered_json chat_to_responses_response(const json& chat, const ordered_json& request) {
  const json& choice = first_choice(chat);
  const json& msg = member(choice, "message");
  const std::string key = id_suffix(str(chat, "id"));
  std::vector<item> items;
  if (const std::string& r = str(msg, "reasoning_content"); !r.empty()) {
    items.push_back({item_kind::reasoning, "rs_" + key, r, "", ""});
  }
  if (const std::string& text = str(msg, "content"); !text.empty()) {
    items.push_back({item_kind::message, "msg_" + key, text, "", ""});
  }
  const json& calls = member(msg, "tool_calls");
  for (const json& tc : calls.is_array() ? calls : json::array()) {
    const json& fn = member(tc, "function");
    items.push_back({item_kind::function_call, call_item_id(str(tc, "id")), str(fn, "arguments"),
                     str(tc, "id"), str(fn, "name")});
  }
  const char* status = response_status(str(choice, "finish_reason"));
  if (!items.empty()) items.back().status = status;  // the item that was cut, if one was
  return response_json(key, count(chat, "created"), str(chat, "model"), status, items,
                       responses_usage(member(chat, "usage")), request);
}

}  // namespace courier::admission
