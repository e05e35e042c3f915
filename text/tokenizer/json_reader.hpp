#pragma once
// Reading tokenizer JSON files with errors that name the file: every failure is a
// tokenizer_error whose message starts with "FILE: ". Private to text/tokenizer.
#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "text/tokenizer/tokenizer_error.hpp"

namespace courier::text {

// Reads one file's JSON; every error it raises starts with the file's name.
class json_reader {
 public:
  explicit json_reader(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw tokenizer_error(origin_ + ": " + what);
  }
  [[noreturn]] void unsupported(const std::string& component, const nlohmann::json& node) const {
    const std::string type = node.is_object() && node.contains("type") && node["type"].is_string()
                                 ? node["type"].get<std::string>()
                                 : node.dump();
    fail(fmt::format("unsupported {} type '{}'", component, type));
  }

  nlohmann::json parse(std::string_view text) const {
    try {
      return nlohmann::json::parse(text.begin(), text.end());
    } catch (const nlohmann::json::exception& e) {
      fail(std::string("invalid JSON: ") + e.what());
    }
  }

  // A field of the expected kind, or `fallback` when absent or null.
  bool get_bool(const nlohmann::json& obj, const char* key, bool fallback) const {
    if (!obj.contains(key) || obj[key].is_null()) return fallback;
    if (!obj[key].is_boolean()) fail(fmt::format("'{}' must be true or false", key));
    return obj[key].get<bool>();
  }
  std::optional<std::string> get_string(const nlohmann::json& obj, const char* key) const {
    if (!obj.contains(key) || obj[key].is_null()) return std::nullopt;
    if (!obj[key].is_string()) fail(fmt::format("'{}' must be a string", key));
    return obj[key].get<std::string>();
  }
  std::uint32_t get_id(const nlohmann::json& value, const std::string& what) const {
    if (!value.is_number_unsigned() || value.get<std::uint64_t>() >= 0xFFFFFFFFULL) {
      fail(fmt::format("{}: expected a token id, got {}", what, value.dump()));
    }
    return value.get<std::uint32_t>();
  }

 private:
  std::string origin_;
};

}  // namespace courier::text
