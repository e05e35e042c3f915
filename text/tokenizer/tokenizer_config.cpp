#include "text/tokenizer/tokenizer_config.hpp"

#include "text/tokenizer/json_reader.hpp"

namespace courier::text {

namespace {

using json = nlohmann::json;

// A special-token entry of tokenizer_config.json: a string or {"content": ...}.
std::optional<std::string> config_token(const json& node) {
  if (node.is_string()) return node.get<std::string>();
  if (node.is_object() && node.contains("content") && node["content"].is_string()) {
    return node["content"].get<std::string>();
  }
  return std::nullopt;
}

}  // namespace

tokenizer_config parse_tokenizer_config(std::string_view text) {
  tokenizer_config c;
  if (text.empty()) return c;
  const json_reader r("tokenizer_config.json");
  const json j = r.parse(text);
  if (!j.is_object()) r.fail("expected a JSON object");
  auto token = [&](const char* key) {
    return j.contains(key) ? config_token(j[key]) : std::nullopt;
  };
  c.bos_token = token("bos_token");
  c.eos_token = token("eos_token");
  c.unk_token = token("unk_token");
  c.pad_token = token("pad_token");
  if (j.contains("additional_special_tokens") && j["additional_special_tokens"].is_array()) {
    for (const json& t : j["additional_special_tokens"]) {
      if (auto s = config_token(t)) c.additional_special_tokens.push_back(*s);
    }
  }
  if (j.contains("add_bos_token") && j["add_bos_token"].is_boolean()) {
    c.add_bos_token = j["add_bos_token"].get<bool>();
  }
  if (j.contains("add_eos_token") && j["add_eos_token"].is_boolean()) {
    c.add_eos_token = j["add_eos_token"].get<bool>();
  }
  c.clean_up_tokenization_spaces = r.get_bool(j, "clean_up_tokenization_spaces", false);
  return c;
}

}  // namespace courier::text
