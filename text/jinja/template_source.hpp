#pragma once
// Where a chat template comes from: a Hugging Face tokenizer_config.json holds it under
// "chat_template", either as one string or as a list of {"name", "template"} (where
// "default" is the plain chat template and e.g. "tool_use" a variant).
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace courier::text::jinja {

// The template called `name` ("default" for a plain string). Throws template_error when the
// config has none, naming the templates it has.
std::string chat_template_from_config(const nlohmann::ordered_json& tokenizer_config,
                                      std::string_view name = "default");

// A special token's text from tokenizer_config.json ("bos_token", "eos_token"): a string, or
// an object with "content" (an AddedToken); std::nullopt when absent or null.
std::optional<std::string> special_token_from_config(const nlohmann::ordered_json& tokenizer_config,
                                                     std::string_view key);

}  // namespace courier::text::jinja
