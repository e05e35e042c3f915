#include "actors/admission/anthropic_messages.hpp"

#include <fmt/format.h>

#include <cctype>
#include <set>
#include <string>

#include "actors/admission/api_translate.hpp"

namespace courier::admission {

using namespace translate;  // the helpers these translators share

using nlohmann::ordered_json;

namespace {

// A content block's type; image and document blocks are refused here, wherever they are.
std::string block_type(const ordered_json& b, const std::string& at) {
  if (!b.is_object()) throw bad_field(at, "expected a content block (an object)");
  std::string type = string_at(b, "type", at);
  if (type == "image" || type == "document") throw bad_field(at, "this model takes text only");
  return type;
}

api_error unsupported(const std::string& at, const std::string& type, const char* where) {
  return bad_field(at + ".type", fmt::format("'{}' blocks are not supported in {}", type, where));
}

ordered_json text_part(const ordered_json& b, const std::string& at) {
  return {{"type", "text"}, {"text", string_at(b, "text", at)}};
}

// Text blocks (a system prompt, a tool result) as chat content parts.
ordered_json text_parts(const ordered_json& blocks, const std::string& at, const char* where) {
  if (!blocks.is_array()) throw bad_field(at, "expected a string or a list of text blocks");
  ordered_json parts = ordered_json::array();
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const std::string bat = fmt::format("{}[{}]", at, i);
    const std::string type = block_type(blocks[i], bat);
    if (type != "text") throw unsupported(bat, type, where);
    parts.push_back(text_part(blocks[i], bat));
  }
  return parts;
}

ordered_json tool_message(const ordered_json& b, const std::string& at) {
  const std::string& id = string_at(b, "tool_use_id", at);
  ordered_json content = "";
  if (const ordered_json* c = given(b, "content")) {
    content = c->is_string() ? *c : text_parts(*c, at + ".content", "tool results");
  }
  if (const ordered_json* e = given(b, "is_error"); e && !e->is_boolean()) {
    throw bad_field(at + ".is_error", "expected true or false");
  }
  return {{"role", "tool"}, {"tool_call_id", id}, {"content", std::move(content)}};
}

// Text blocks gather into user messages; each tool_result is a tool message where it stands.
void add_user(const ordered_json& blocks, const std::string& at, ordered_json& out) {
  ordered_json parts = ordered_json::array();
  const auto flush = [&] {
    if (parts.empty()) return;
    out.push_back({{"role", "user"}, {"content", std::move(parts)}});
    parts = ordered_json::array();
  };
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const std::string bat = fmt::format("{}[{}]", at, i);
    const std::string type = block_type(blocks[i], bat);
    if (type == "text") {
      parts.push_back(text_part(blocks[i], bat));
    } else if (type == "tool_result") {
      flush();
      out.push_back(tool_message(blocks[i], bat));
    } else {
      throw unsupported(bat, type, "user messages");
    }
  }
  flush();
}

ordered_json tool_call(const ordered_json& b, const std::string& at) {
  const ordered_json* input = given(b, "input");
  if (input && !input->is_object()) throw bad_field(at + ".input", "expected an object");
  return {{"id", string_at(b, "id", at)},
          {"type", "function"},
          {"function",
           {{"name", string_at(b, "name", at)}, {"arguments", input ? input->dump() : "{}"}}}};
}

void add_assistant(const ordered_json& blocks, const std::string& at, ordered_json& out) {
  ordered_json parts = ordered_json::array(), calls = ordered_json::array();
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const std::string bat = fmt::format("{}[{}]", at, i);
    const std::string type = block_type(blocks[i], bat);
    if (type == "text") {
      parts.push_back(text_part(blocks[i], bat));
    } else if (type == "tool_use") {
      calls.push_back(tool_call(blocks[i], bat));
    } else if (type != "thinking" && type != "redacted_thinking") {  // earlier reasoning: dropped
      throw unsupported(bat, type, "assistant messages");
    }
  }
  ordered_json m = {{"role", "assistant"},
                    {"content", parts.empty() ? ordered_json(nullptr) : std::move(parts)}};
  if (!calls.empty()) m["tool_calls"] = std::move(calls);
  out.push_back(std::move(m));
}

ordered_json chat_messages_of(const ordered_json& body) {
  ordered_json out = ordered_json::array();
  if (const ordered_json* s = given(body, "system")) {
    out.push_back(
        {{"role", "system"},
         {"content", s->is_string() ? *s : text_parts(*s, "system", "the system prompt")}});
  }
  const ordered_json* ms = given(body, "messages");
  if (!ms || !ms->is_array() || ms->empty()) {
    throw bad_field("messages", "is required (a non-empty list of messages)");
  }
  for (std::size_t i = 0; i < ms->size(); ++i) {
    const std::string at = fmt::format("messages[{}]", i);
    const ordered_json& m = (*ms)[i];
    if (!m.is_object()) throw bad_field(at, "expected a message object");
    const std::string& role = string_at(m, "role", at);
    if (role != "user" && role != "assistant") {
      throw bad_field(at + ".role",
                      fmt::format("unknown role '{}'; expected user or assistant", role));
    }
    const ordered_json* content = given(m, "content");
    if (content && content->is_string()) {
      out.push_back({{"role", role}, {"content", *content}});
    } else if (content && content->is_array() && !content->empty()) {
      (role == "user" ? add_user : add_assistant)(*content, at + ".content", out);
    } else {
      throw bad_field(at + ".content", "expected a string or a non-empty list of content blocks");
    }
  }
  return out;
}

ordered_json chat_tools(const ordered_json& tools) {
  return chat_tools_of(tools, [](const ordered_json& t, const std::string& at) {
    if (const ordered_json* type = given(t, "type"); type && *type != "custom") {
      throw bad_field(at + ".type",
                      fmt::format("{} tools are not supported: courier serves custom tools "
                                  "only (name, description, input_schema)",
                                  type->dump()));
    }
    return chat_function_tool(t, at, "input_schema", true);
  });
}

void add_tool_choice(const ordered_json& tc, ordered_json& out) {
  if (!tc.is_object()) throw bad_field("tool_choice", "expected an object with a 'type'");
  const std::string& type = string_at(tc, "type", "tool_choice");
  if (type == "auto" || type == "none") {
    out["tool_choice"] = type;
  } else if (type == "any") {
    out["tool_choice"] = "required";
  } else if (type == "tool") {
    out["tool_choice"] = {{"type", "function"},
                          {"function", {{"name", string_at(tc, "name", "tool_choice")}}}};
  } else {
    throw bad_field("tool_choice.type",
              fmt::format("unknown type '{}'; expected auto, any, tool or none", type));
  }
  if (const ordered_json* d = given(tc, "disable_parallel_tool_use")) {
    if (!d->is_boolean()) {
      throw bad_field("tool_choice.disable_parallel_tool_use", "expected true or false");
    }
    out["parallel_tool_calls"] = !d->get<bool>();
  }
}

// A final assistant message is a prefill: the answer continues it (`{"answer":` to force a
// format) instead of a new turn. Anthropic refuses one that ends in whitespace.
void prefill(const ordered_json& body, ordered_json& chat) {
  const ordered_json& content = chat["messages"].back()["content"];
  std::string text;
  if (content.is_string()) {
    text = content.get<std::string>();
  } else if (content.is_array() && !content.empty()) {
    text = content.back().value("text", "");
  }
  if (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    throw bad_field(fmt::format("messages[{}].content", body["messages"].size() - 1),
                    "final assistant content cannot end with trailing whitespace");
  }
  chat["continue_final_message"] = true;
}

// A structured output's format ({"type": "json_schema", "schema": {...}}): the answer's text is
// JSON its schema accepts, compiled as chat's response_format json_schema is (strict).
ordered_json output_format(const ordered_json& f, const std::string& at) {
  if (!f.is_object()) throw bad_field(at, "expected an object with a 'type'");
  const std::string& type = string_at(f, "type", at);
  if (type != "json_schema") {
    throw bad_field(at + ".type", fmt::format("unknown type '{}'; expected json_schema", type));
  }
  const ordered_json* schema = given(f, "schema");
  if (!schema || !schema->is_object()) {
    throw bad_field(at + ".schema", "is required (a JSON Schema object)");
  }
  return {{"type", "json_schema"},
          {"json_schema", {{"name", "output"}, {"schema", *schema}, {"strict", true}}}};
}

// output_config: {format, effort}, both optional; the beta's top-level output_format is the
// same format. effort (low to max) tells Anthropic's own models how hard to think: taken and
// not acted on, as a sampling hint a model has no use for.
void add_output_config(const ordered_json& body, ordered_json& out) {
  const ordered_json* config = given(body, "output_config");
  if (config && !config->is_object()) throw bad_field("output_config", "expected an object");
  if (const ordered_json* e = config ? given(*config, "effort") : nullptr) {
    static const std::set<std::string> levels = {"low", "medium", "high", "xhigh", "max"};
    if (!e->is_string() || levels.count(e->get<std::string>()) == 0) {
      throw bad_field("output_config.effort", "expected low, medium, high, xhigh or max");
    }
  }
  const ordered_json* format = config ? given(*config, "format") : nullptr;
  const ordered_json* beta = given(body, "output_format");
  if (format && beta) {
    throw bad_field("output_format", "give the format once, as output_config.format");
  }
  if (format) out["response_format"] = output_format(*format, "output_config.format");
  if (beta) out["response_format"] = output_format(*beta, "output_format");
}

}  // namespace

ordered_json anthropic_to_chat_request(const ordered_json& body) {
  if (!body.is_object()) throw api_error(400, "the body must be a JSON object");
  ordered_json out = {{"model", string_at(body, "model", "")}};
  out["messages"] = chat_messages_of(body);
  const ordered_json* max_tokens = given(body, "max_tokens");
  if (!max_tokens || !positive_integer(*max_tokens)) {
    throw bad_field("max_tokens", "is required (an integer >= 1)");
  }
  out["max_tokens"] = *max_tokens;
  // Same names on both sides: the chat parser checks their ranges and names them.
  for (const char* key : {"temperature", "top_p", "top_k"}) {
    if (const ordered_json* v = given(body, key)) out[key] = *v;
  }
  if (const ordered_json* stop = given(body, "stop_sequences")) {
    if (!stop->is_array()) throw bad_field("stop_sequences", "expected a list of strings");
    for (std::size_t i = 0; i < stop->size(); ++i) {
      if (!(*stop)[i].is_string()) {
        throw bad_field(fmt::format("stop_sequences[{}]", i), "expected a string");
      }
    }
    out["stop"] = *stop;
  }
  if (const ordered_json* stream = given(body, "stream")) {
    if (!stream->is_boolean()) throw bad_field("stream", "expected true or false");
    out["stream"] = *stream;
    if (stream->get<bool>()) out["stream_options"] = {{"include_usage", true}};
  }
  if (const ordered_json* tools = given(body, "tools")) out["tools"] = chat_tools(*tools);
  if (const ordered_json* tc = given(body, "tool_choice")) add_tool_choice(*tc, out);
  add_output_config(body, out);
  if (out["messages"].back()["role"] == "assistant") prefill(body, out);
  return out;
}

}  // namespace courier::admission
