#include "text/jinja/template_source.hpp"

#include "text/jinja/template_error.hpp"

namespace courier::text::jinja {

std::string chat_template_from_config(const nlohmann::ordered_json& tokenizer_config,
                                      std::string_view name) {
  if (!tokenizer_config.is_object() || !tokenizer_config.contains("chat_template") ||
      tokenizer_config["chat_template"].is_null()) {
    throw template_error("tokenizer_config.json has no chat_template");
  }
  const auto& t = tokenizer_config["chat_template"];
  if (t.is_string()) {
    if (name != "default") {
      throw template_error("tokenizer_config.json has one chat_template, not one called '" +
                           std::string(name) + "'");
    }
    return t.get<std::string>();
  }
  if (!t.is_array())
    throw template_error("tokenizer_config.json: chat_template must be a string or a list");
  std::string names;
  for (const auto& entry : t) {
    if (!entry.is_object() || !entry.contains("name") || !entry.contains("template") ||
        !entry["name"].is_string() || !entry["template"].is_string()) {
      throw template_error(
          "tokenizer_config.json: each chat_template entry needs a name and a template");
    }
    if (entry["name"].get<std::string>() == name) return entry["template"].get<std::string>();
    names += (names.empty() ? "" : ", ") + entry["name"].get<std::string>();
  }
  throw template_error("tokenizer_config.json has no chat_template called '" + std::string(name) +
                       "' (it has: " + names + ")");
}

std::optional<std::string> special_token_from_config(const nlohmann::ordered_json& tokenizer_config,
                                                     std::string_view key) {
  if (!tokenizer_config.is_object()) return std::nullopt;
  const auto it = tokenizer_config.find(std::string(key));
  if (it == tokenizer_config.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
    return (*it)["content"].get<std::string>();
  }
  return std::nullopt;
}

}  // namespace courier::text::jinja
