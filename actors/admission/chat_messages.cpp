#include "actors/admission/chat_messages.hpp"

#include <fmt/format.h>

#include "actors/admission/api_error.hpp"
#include "actors/admission/json_body.hpp"

namespace courier::admission {

using nlohmann::ordered_json;

namespace {

api_error bad_message(const std::string& where, const std::string& what) {
  return api_error(400, fmt::format("'{}': {}", where, what), "messages");
}

// A list of content parts, joined into the one string a template expects.
std::string join_parts(const ordered_json& parts, const std::string& where, bool assistant) {
  std::string text;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const std::string at = fmt::format("{}[{}]", where, k);
    const ordered_json& part = parts[k];
    if (part.is_string()) {  // some clients send plain strings in the list
      if (k > 0) text += '\n';
      text += part.get<std::string>();
      continue;
    }
    if (!part.is_object() || !part.contains("type") || !part["type"].is_string()) {
      throw bad_message(at, "expected a content part with a string 'type'");
    }
    const std::string type = part["type"].get<std::string>();
    const char* field = type == "text"                    ? "text"
                        : (type == "refusal" && assistant) ? "refusal"
                                                           : nullptr;
    if (!field) {
      if (type == "image_url" || type == "input_audio" || type == "file" || type == "image" ||
          type == "audio" || type == "video" || type == "video_url" || type == "input_image") {
        throw bad_message(at, fmt::format("this model takes text only: '{}' parts are not "
                                          "supported",
                                          type));
      }
      throw bad_message(at, fmt::format("unknown content part type '{}'", type));
    }
    if (!part.contains(field) || !part[field].is_string()) {
      throw bad_message(at, fmt::format("a '{}' part needs a string '{}'", type, field));
    }
    if (k > 0) text += '\n';
    text += part[field].get<std::string>();
  }
  return text;
}

void normalize_tool_calls(ordered_json& calls, const std::string& where, int max_depth) {
  if (calls.is_null()) return;
  if (!calls.is_array()) throw bad_message(where, "expected a list of tool calls");
  for (std::size_t k = 0; k < calls.size(); ++k) {
    ordered_json& call = calls[k];
    const std::string at = fmt::format("{}[{}]", where, k);
    if (!call.is_object()) throw bad_message(at, "expected a tool call object");
    if (!call.contains("function")) continue;
    ordered_json& fn = call["function"];
    if (!fn.is_object()) throw bad_message(at + ".function", "expected an object");
    if (fn.contains("name") && !fn["name"].is_string()) {
      throw bad_message(at + ".function.name", "expected a string");
    }
    if (fn.contains("arguments") && fn["arguments"].is_string()) {
      // A malformed string is left as it is: the template writes it as it came.
      auto args = parse_json_in_string(fn["arguments"].get<std::string>(), max_depth,
                                       at + ".function.arguments");
      if (args && args->is_object()) fn["arguments"] = std::move(*args);
    }
  }
}

}  // namespace

ordered_json template_messages(const ordered_json& messages, int max_depth) {
  if (!messages.is_array() || messages.empty()) {
    throw api_error(400, "'messages': expected a non-empty list of messages", "messages");
  }
  ordered_json out = ordered_json::array();
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const std::string at = fmt::format("messages[{}]", i);
    const ordered_json& m = messages[i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
      throw bad_message(at, "each message needs a string 'role'");
    }
    ordered_json msg = m;
    std::string role = m["role"].get<std::string>();
    if (role == "developer") role = "system";  // OpenAI's newer name for the system role
    if (role != "system" && role != "user" && role != "assistant" && role != "tool") {
      throw bad_message(at + ".role", fmt::format("unknown role '{}'; expected system, "
                                                  "developer, user, assistant or tool",
                                                  role));
    }
    msg["role"] = role;
    const bool assistant = role == "assistant";
    if (!msg.contains("content") || msg["content"].is_null()) {
      if (!assistant) throw bad_message(at + ".content", "is required for a " + role + " message");
      msg["content"] = "";  // as vLLM: templates test `'</think>' in content`, which null breaks
    } else if (msg["content"].is_array()) {
      msg["content"] = join_parts(msg["content"], at + ".content", assistant);
    } else if (!msg["content"].is_string()) {
      throw bad_message(at + ".content", "expected a string, a list of content parts or null");
    }
    if (msg.contains("tool_calls")) normalize_tool_calls(msg["tool_calls"], at + ".tool_calls", max_depth);
    out.push_back(std::move(msg));
  }
  return out;
}

}  // namespace courier::admission
