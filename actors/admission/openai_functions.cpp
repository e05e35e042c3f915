#include "actors/admission/openai_functions.hpp"

#include <fmt/format.h>

#include <string>

#include "actors/admission/api_translate.hpp"

namespace courier::admission {

using namespace translate;  // the helpers the translators share

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

ordered_json tools_of(const ordered_json& functions) {
  if (!functions.is_array()) throw bad_field("functions", "expected a list of functions");
  ordered_json tools = ordered_json::array();
  for (std::size_t i = 0; i < functions.size(); ++i) {
    const ordered_json& f = functions[i];
    const std::string at = fmt::format("functions[{}]", i);
    if (!f.is_object()) throw bad_field(at, "expected a function (an object)");
    string_at(f, "name", at);  // required
    tools.push_back({{"type", "function"}, {"function", f}});
  }
  return tools;
}

ordered_json tool_choice_of(const ordered_json& call) {
  if (call == "none" || call == "auto") return call;
  if (!call.is_object()) {
    throw bad_field("function_call", "expected \"none\", \"auto\" or {\"name\": ...}");
  }
  return {{"type", "function"}, {"function", {{"name", string_at(call, "name", "function_call")}}}};
}

// The history's legacy turns as tool calls and tool messages.
ordered_json messages_of(const ordered_json& messages) {
  if (!messages.is_array()) return messages;  // the chat parser names it
  ordered_json out = ordered_json::array();
  std::string last_call;  // the id of the latest assistant function_call
  for (std::size_t i = 0; i < messages.size(); ++i) {
    ordered_json m = messages[i];
    const std::string at = fmt::format("messages[{}]", i);
    if (!m.is_object()) {
      out.push_back(std::move(m));
      continue;
    }
    if (const ordered_json* call = given(m, "function_call")) {
      if (!call->is_object()) throw bad_field(at + ".function_call", "expected {name, arguments}");
      last_call = fmt::format("call_legacy_{}", i);
      ordered_json fn = {{"name", string_at(*call, "name", at + ".function_call")},
                         {"arguments", call->value("arguments", "")}};
      m.erase("function_call");
      m["tool_calls"] = ordered_json::array(
          {{{"id", last_call}, {"type", "function"}, {"function", std::move(fn)}}});
    } else if (m.value("role", "") == "function") {
      if (last_call.empty()) {
        throw bad_field(at, "a function result with no assistant function_call before it");
      }
      m["role"] = "tool";
      m["tool_call_id"] = last_call;
    }
    out.push_back(std::move(m));
  }
  return out;
}

// message.tool_calls (or a delta's) -> the legacy function_call of its first call.
void to_function_call(json& holder, bool streamed) {
  auto it = holder.find("tool_calls");
  if (it == holder.end()) return;
  if (it->is_array() && !it->empty()) {
    const json& fn = (*it)[0].value("function", json::object());
    json call = json::object();
    if (fn.contains("name")) call["name"] = fn["name"];
    if (fn.contains("arguments") || !streamed) call["arguments"] = fn.value("arguments", "");
    holder["function_call"] = std::move(call);
  }
  holder.erase("tool_calls");
}

void finish_reason_of(json& choice) {
  if (choice.value("finish_reason", json()) == "tool_calls")
    choice["finish_reason"] = "function_call";
}

}  // namespace

bool uses_legacy_functions(const ordered_json& body) {
  // Explicit nulls (as agent SDKs send unset fields) are not the legacy form.
  return body.is_object() && (given(body, "functions") || given(body, "function_call"));
}

ordered_json legacy_functions_to_tools(const ordered_json& body) {
  ordered_json out = body;
  for (const char* modern : {"tools", "tool_choice"}) {
    if (given(body, modern)) {
      throw bad_field(given(body, "functions") ? "functions" : "function_call",
                      fmt::format("give the legacy functions or {}, not both", modern));
    }
  }
  if (const ordered_json* f = given(body, "functions")) out["tools"] = tools_of(*f);
  if (const ordered_json* c = given(body, "function_call")) out["tool_choice"] = tool_choice_of(*c);
  out.erase("functions");
  out.erase("function_call");
  out["parallel_tool_calls"] = false;
  if (const ordered_json* m = given(body, "messages")) out["messages"] = messages_of(*m);
  return out;
}

void legacy_functions_response(json& chat_response) {
  if (!chat_response.contains("choices")) return;
  for (json& choice : chat_response["choices"]) {
    if (choice.contains("message")) to_function_call(choice["message"], false);
    finish_reason_of(choice);
  }
}

void legacy_functions_chunk(json& chat_chunk) {
  if (!chat_chunk.contains("choices")) return;
  for (json& choice : chat_chunk["choices"]) {
    if (choice.contains("delta")) to_function_call(choice["delta"], true);
    finish_reason_of(choice);
  }
}

}  // namespace courier::admission
