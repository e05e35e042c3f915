#include "actors/admission/api_translate.hpp"

#include <fmt/format.h>

namespace courier::admission::translate {

using nlohmann::json;
using nlohmann::ordered_json;

std::string path(const std::string& at, const char* key) {
  return at.empty() ? std::string(key) : at + "." + key;
}

const ordered_json* given(const ordered_json& obj, const char* key) {
  const auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

const std::string& string_at(const ordered_json& obj, const char* key, const std::string& at) {
  const ordered_json* v = given(obj, key);
  if (!v || !v->is_string()) throw bad_field(path(at, key), "is required (a string)");
  return v->get_ref<const std::string&>();
}

bool positive_integer(const ordered_json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>() >= 1;
  return v.is_number_integer() && v.get<std::int64_t>() >= 1;
}

const std::string& str(const json& obj, const char* key) {
  static const std::string none;
  if (!obj.is_object()) return none;
  const auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get_ref<const std::string&>() : none;
}

std::int64_t count(const json& obj, const char* key) {
  if (!obj.is_object()) return 0;
  const auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

const json& member(const json& obj, const char* key) {
  static const json none;
  if (!obj.is_object()) return none;
  const auto it = obj.find(key);
  return it == obj.end() ? none : *it;
}

const json& first_choice(const json& chat) {
  static const json none;
  const json& choices = member(chat, "choices");
  return choices.is_array() && !choices.empty() ? choices[0] : none;
}

std::string id_suffix(const std::string& id) {
  const auto dash = id.find('-');
  return dash == std::string::npos ? id : id.substr(dash + 1);
}

std::string sse_event(const ordered_json& data) {
  return fmt::format("event: {}\ndata: {}\n\n", data["type"].get<std::string>(),
                     data.dump(-1, ' ', false, ordered_json::error_handler_t::replace));
}

ordered_json chat_function_tool(const ordered_json& t, const std::string& at,
                                const char* schema_key, bool schema_required) {
  ordered_json fn = {{"name", string_at(t, "name", at)}};
  if (given(t, "description")) fn["description"] = string_at(t, "description", at);
  const ordered_json* schema = given(t, schema_key);
  if (schema || schema_required) {
    if (!schema || !schema->is_object()) {
      throw bad_field(path(at, schema_key), schema_required ? "is required (a JSON Schema object)"
                                                      : "expected a JSON Schema object");
    }
    fn["parameters"] = *schema;
  }
  if (const ordered_json* strict = given(t, "strict")) {
    if (!strict->is_boolean()) throw bad_field(path(at, "strict"), "expected true or false");
    fn["strict"] = *strict;
  }
  return {{"type", "function"}, {"function", std::move(fn)}};
}

ordered_json chat_tools_of(const ordered_json& tools, const tool_translator& tool) {
  if (!tools.is_array()) throw bad_field("tools", "expected a list of tools");
  ordered_json out = ordered_json::array();
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const std::string at = fmt::format("tools[{}]", i);
    if (!tools[i].is_object()) throw bad_field(at, "expected a tool object");
    out.push_back(tool(tools[i], at));
  }
  return out;
}

}  // namespace courier::admission::translate
