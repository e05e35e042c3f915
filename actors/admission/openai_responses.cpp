#include "actors/admission/openai_responses.hpp"

#include <fmt/format.h>

#include <optional>
#include <utility>

#include "actors/admission/api_translate.hpp"

namespace courier::admission {

using namespace translate;  // the helpers these translators share

using nlohmann::ordered_json;

namespace {

void refuse_stateful(const ordered_json& body) {
  if (given(body, "conversation")) {
    throw bad_field("conversation",
                    "courier keeps no conversations: send the items in 'input', or continue "
                    "a stored response with 'previous_response_id'");
  }
  if (const ordered_json* b = given(body, "background"); b && *b == true) {
    throw bad_field("background",
                    "courier runs no background responses: nothing could fetch one");
  }
  if (given(body, "prompt")) {
    throw bad_field("prompt", "courier keeps no stored prompts: send the text in 'instructions'");
  }
  if (const ordered_json* st = given(body, "store"); st && !st->is_boolean()) {
    throw bad_field("store", "expected true or false");
  }
}

// The input items a body brings: a string is one user message.
ordered_json input_items(const ordered_json& body) {
  const ordered_json* input = given(body, "input");
  if (!input) throw bad_field("input", "is required (a string or a list of items)");
  if (input->is_string()) {
    return ordered_json::array({{{"type", "message"}, {"role", "user"}, {"content", *input}}});
  }
  if (!input->is_array()) throw bad_field("input", "expected a string or a list of items");
  return *input;
}

// Content parts as chat text parts.
ordered_json text_parts(const ordered_json& parts, const std::string& at) {
  ordered_json out = ordered_json::array();
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const std::string pat = fmt::format("{}[{}]", at, k);
    if (!parts[k].is_object()) throw bad_field(pat, "expected a content part (an object)");
    const std::string& type = string_at(parts[k], "type", pat);
    if (type == "input_text" || type == "output_text") {
      out.push_back({{"type", "text"}, {"text", string_at(parts[k], "text", pat)}});
    } else if (type == "refusal") {
      out.push_back({{"type", "text"}, {"text", string_at(parts[k], "refusal", pat)}});
    } else if (type == "input_image" || type == "input_file" || type == "input_audio") {
      throw bad_field(pat, "this model takes text only");
    } else {
      throw bad_field(pat + ".type", fmt::format("unknown content type '{}'", type));
    }
  }
  return out;
}

ordered_json content_of(const ordered_json& item, const char* key, const std::string& at) {
  const ordered_json* c = given(item, key);
  if (c && c->is_string()) return *c;
  if (c && c->is_array()) return text_parts(*c, path(at, key));
  throw bad_field(path(at, key), "expected a string or a list of content parts");
}

ordered_json input_message(const ordered_json& m, const std::string& at) {
  std::string role = string_at(m, "role", at);
  if (role == "developer") role = "system";  // OpenAI's newer name for the system role
  if (role != "system" && role != "user" && role != "assistant") {
    throw bad_field(
        at + ".role",
        fmt::format("unknown role '{}'; expected user, system, developer or assistant", role));
  }
  return {{"role", role}, {"content", content_of(m, "content", at)}};
}

// The calls of one turn make one assistant message: its text (the message just before) and
// the calls that follow it, as chat templates render a turn.
void add_call(const ordered_json& it, const std::string& at, ordered_json& out) {
  ordered_json call = {
      {"id", string_at(it, "call_id", at)},
      {"type", "function"},
      {"function",
       {{"name", string_at(it, "name", at)}, {"arguments", string_at(it, "arguments", at)}}}};
  if (out.empty() || out.back()["role"] != "assistant") {
    out.push_back({{"role", "assistant"}, {"content", nullptr}});
  }
  out.back()["tool_calls"].push_back(std::move(call));
}

void add_input(const responses_input& input, ordered_json& out) {
  for (std::size_t i = 0; i < input.items.size(); ++i) {
    const std::string at = i < input.continued
                               ? std::string("previous_response_id")
                               : fmt::format("input[{}]", i - input.continued);
    const ordered_json& it = input.items[i];
    if (!it.is_object()) throw bad_field(at, "expected an item (an object)");
    // A message may leave out its type; every other item names it.
    const std::string type =
        given(it, "type") || !given(it, "role") ? string_at(it, "type", at) : "message";
    if (type == "message") {
      out.push_back(input_message(it, at));
    } else if (type == "function_call") {
      add_call(it, at, out);
    } else if (type == "function_call_output") {
      out.push_back({{"role", "tool"},
                     {"tool_call_id", string_at(it, "call_id", at)},
                     {"content", content_of(it, "output", at)}});
    } else if (type == "item_reference") {
      throw bad_field(at + ".type", "courier keeps no items: send the item itself");
    } else if (type != "reasoning") {  // earlier reasoning: dropped
      throw bad_field(at + ".type",
                      fmt::format("'{}' items are not supported: courier takes messages, "
                                  "function_call and function_call_output",
                                  type));
    }
  }
}

ordered_json chat_tools(const ordered_json& tools) {
  return chat_tools_of(tools, [](const ordered_json& t, const std::string& at) {
    const std::string& type = string_at(t, "type", at);
    if (type != "function") {
      throw bad_field(at + ".type", fmt::format("'{}' tools are not supported: courier serves "
                                                "function tools only",
                                                type));
    }
    return chat_function_tool(t, at, "parameters", false);
  });
}

ordered_json chat_tool_choice(const ordered_json& tc) {
  if (tc == "auto" || tc == "none" || tc == "required") return tc;
  if (!tc.is_object()) throw bad_field("tool_choice", "expected auto, none, required or an object");
  const std::string& type = string_at(tc, "type", "tool_choice");
  if (type != "function") {
    throw bad_field("tool_choice.type",
                    fmt::format("'{}' is not supported: courier serves function "
                                "tools only",
                                type));
  }
  return {{"type", "function"}, {"function", {{"name", string_at(tc, "name", "tool_choice")}}}};
}

// `text`: {format, verbosity}, both optional. Without a format the answer is plain text (the
// API's default format, {"type": "text"}): LangChain sends "text": {} on every request.
// verbosity (low, medium or high) is a hint to OpenAI's own models on how much to say, taken
// and not acted on, as a sampling hint a model has no use for.
std::optional<ordered_json> response_format(const ordered_json& text) {
  if (!text.is_object()) throw bad_field("text", "expected an object");
  if (const ordered_json* v = given(text, "verbosity");
      v && *v != "low" && *v != "medium" && *v != "high") {
    throw bad_field("text.verbosity", "expected low, medium or high");
  }
  const ordered_json* f = given(text, "format");
  if (!f) return std::nullopt;
  if (!f->is_object()) throw bad_field("text.format", "expected an object with a 'type'");
  const std::string& type = string_at(*f, "type", "text.format");
  if (type == "text" || type == "json_object") return ordered_json{{"type", type}};
  if (type != "json_schema") {
    throw bad_field("text.format.type",
              fmt::format("unknown type '{}'; expected text, json_object or json_schema", type));
  }
  ordered_json js = {{"name", string_at(*f, "name", "text.format")}};
  if (given(*f, "description")) js["description"] = string_at(*f, "description", "text.format");
  const ordered_json* schema = given(*f, "schema");
  if (!schema || !schema->is_object()) {
    throw bad_field("text.format.schema", "is required (a JSON Schema object)");
  }
  js["schema"] = *schema;
  if (const ordered_json* strict = given(*f, "strict")) {
    if (!strict->is_boolean()) throw bad_field("text.format.strict", "expected true or false");
    js["strict"] = *strict;
  }
  return ordered_json{{"type", "json_schema"}, {"json_schema", std::move(js)}};
}

}  // namespace

responses_input responses_conversation(const ordered_json& body,
                                       const stored_responses* stored) {
  if (!body.is_object()) throw api_error(400, "the body must be a JSON object");
  responses_input in;
  if (given(body, "previous_response_id")) {
    const std::string& id = string_at(body, "previous_response_id", "");
    if (!stored) {
      throw bad_field("previous_response_id",
                      "courier keeps no responses here (server.responses_store_mb is 0): send "
                      "the whole conversation in 'input'");
    }
    std::optional<ordered_json> earlier = stored->continued(id);
    if (!earlier) {
      throw bad_field("previous_response_id",
                      fmt::format("no stored response '{}' (responses are kept for "
                                  "server.responses_store_s, while server.responses_store_mb "
                                  "holds them)",
                                  id));
    }
    in.items = std::move(*earlier);
    in.continued = in.items.size();
  }
  ordered_json own = input_items(body);
  for (std::size_t i = 0; i < own.size(); ++i) {
    ordered_json& it = own[i];
    if (!it.is_object() || !given(it, "type") || it["type"] != "item_reference") {
      in.items.push_back(std::move(it));
      continue;
    }
    const std::string at = fmt::format("input[{}]", i);
    const std::string& id = string_at(it, "id", at);
    std::optional<ordered_json> kept = stored ? stored->item(id) : std::nullopt;
    if (!kept) {
      throw bad_field(at + ".id", stored ? fmt::format("no stored item '{}'", id)
                                         : std::string("courier keeps no items here "
                                                       "(server.responses_store_mb is 0): "
                                                       "send the item itself"));
    }
    in.items.push_back(std::move(*kept));
  }
  return in;
}

ordered_json responses_to_chat_request(const ordered_json& body) {
  return responses_to_chat_request(body, responses_conversation(body, nullptr));
}

ordered_json responses_to_chat_request(const ordered_json& body, const responses_input& input) {
  if (!body.is_object()) throw api_error(400, "the body must be a JSON object");
  refuse_stateful(body);
  ordered_json out = {{"model", string_at(body, "model", "")}};
  ordered_json messages = ordered_json::array();
  if (given(body, "instructions")) {
    messages.push_back({{"role", "system"}, {"content", string_at(body, "instructions", "")}});
  }
  add_input(input, messages);
  if (messages.empty()) throw bad_field("input", "holds no message");
  out["messages"] = std::move(messages);
  if (const ordered_json* max = given(body, "max_output_tokens")) {
    if (!positive_integer(*max)) throw bad_field("max_output_tokens", "expected an integer >= 1");
    out["max_tokens"] = *max;
  }
  // Same names on both sides: the chat parser checks them and names them.
  for (const char* key : {"temperature", "top_p"}) {
    if (const ordered_json* v = given(body, key)) out[key] = *v;
  }
  if (const ordered_json* stream = given(body, "stream")) {
    if (!stream->is_boolean()) throw bad_field("stream", "expected true or false");
    out["stream"] = *stream;
    if (stream->get<bool>()) out["stream_options"] = {{"include_usage", true}};
  }
  if (const ordered_json* tools = given(body, "tools")) out["tools"] = chat_tools(*tools);
  if (const ordered_json* tc = given(body, "tool_choice")) {
    out["tool_choice"] = chat_tool_choice(*tc);
  }
  if (const ordered_json* p = given(body, "parallel_tool_calls")) out["parallel_tool_calls"] = *p;
  if (const ordered_json* text = given(body, "text")) {
    if (std::optional<ordered_json> format = response_format(*text)) {
      out["response_format"] = std::move(*format);
    }
  }
  return out;
}

}  // namespace courier::admission
