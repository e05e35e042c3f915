#include "actors/admission/anthropic_messages.hpp"

#include "actors/admission/anthropic_internal.hpp"
#include "actors/admission/api_translate.hpp"
#include "actors/admission/json_body.hpp"

namespace courier::admission {

using namespace translate;  // the helpers these translators share

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

// Tool arguments are the model's text, and the input object made of them is dumped
// recursively later: deeper nesting than a request body may have is not parsed.
constexpr int max_arguments_depth = 64;

// The arguments as an object; anything else (unparsable, cut off, not an object) is {}.
ordered_json input_of(const std::string& arguments) {
  auto v = base::try_parse_json_text<ordered_json>(arguments, max_arguments_depth);
  return v && v->is_object() ? std::move(*v) : ordered_json::object();
}

}  // namespace

std::string tool_use_id(const std::string& call_id) {
  return call_id.rfind("call_", 0) == 0 ? "toolu_" + call_id.substr(5) : call_id;
}

ordered_json anthropic_usage(const json& u) {
  const std::int64_t cached = count(member(u, "prompt_tokens_details"), "cached_tokens");
  return {{"input_tokens", count(u, "prompt_tokens") - cached},
          {"cache_creation_input_tokens", 0},
          {"cache_read_input_tokens", cached},
          {"output_tokens", count(u, "completion_tokens")}};
}

std::string stop_reason(const std::string& finish, bool has_calls, bool matched_stop) {
  if (finish == "length") return "max_tokens";
  if (has_calls || finish == "tool_calls") return "tool_use";
  return matched_stop ? "stop_sequence" : "end_turn";
}

ordered_json stop_sequence(const std::string& reason, const std::optional<std::string>& matched) {
  return reason == "stop_sequence" ? ordered_json(*matched) : ordered_json(nullptr);
}

const char* error_type(int status) {
  switch (status) {
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
    case 529:
      return "overloaded_error";
    default:
      return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

ordered_json chat_to_anthropic_response(const json& chat,
                                        const std::optional<std::string>& matched_stop) {
  const json& choice = first_choice(chat);
  const json& msg = member(choice, "message");
  ordered_json content = ordered_json::array();
  if (const std::string& r = str(msg, "reasoning_content"); !r.empty()) {
    content.push_back({{"type", "thinking"}, {"thinking", r}, {"signature", ""}});
  }
  if (const std::string& text = str(msg, "content"); !text.empty()) {
    content.push_back({{"type", "text"}, {"text", text}});
  }
  const json& calls = member(msg, "tool_calls");
  bool has_calls = false;
  for (const json& tc : calls.is_array() ? calls : json::array()) {
    const json& fn = member(tc, "function");
    content.push_back({{"type", "tool_use"},
                       {"id", tool_use_id(str(tc, "id"))},
                       {"name", str(fn, "name")},
                       {"input", input_of(str(fn, "arguments"))}});
    has_calls = true;
  }
  const std::string reason =
      stop_reason(str(choice, "finish_reason"), has_calls, matched_stop.has_value());
  return {{"id", "msg_" + id_suffix(str(chat, "id"))},
          {"type", "message"},
          {"role", "assistant"},
          {"model", str(chat, "model")},
          {"content", std::move(content)},
          {"stop_reason", reason},
          {"stop_sequence", stop_sequence(reason, matched_stop)},
          {"usage", anthropic_usage(member(chat, "usage"))}};
}

json anthropic_error(int status, const json& openai_error_body) {
  const json& e = member(openai_error_body, "error");
  std::string message = str(e, "message");
  // Anthropic words a context overflow "prompt is too long", which clients (LangChain's
  // ChatAnthropic) look for to tell it from other 400s.
  if (str(e, "code") == "context_length_exceeded") message = "prompt is too long: " + message;
  return {{"type", "error"}, {"error", {{"type", error_type(status)}, {"message", message}}}};
}

}  // namespace courier::admission
