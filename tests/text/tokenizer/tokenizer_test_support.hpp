#pragma once
// Shared helpers of the tokenizer tests: the two fixture tokenizers (loaded once), the
// reference cases, and a UTF-8 validator written independently of text/tokenizer/utf8.
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "text/tokenizer/tokenizer.hpp"

namespace courier::test {

inline std::string tokenizer_data_dir() {
  return COURIER_TEST_DATA;
}

inline const text::tokenizer& qwen3_tokenizer() {
  static const text::tokenizer t =
      text::tokenizer::load(tokenizer_data_dir() + "/models/tiny-qwen3/tokenizer.json");
  return t;
}

inline const text::tokenizer& llama3_tokenizer() {
  static const text::tokenizer t =
      text::tokenizer::load(tokenizer_data_dir() + "/tokenizers/llama3/tokenizer.json");
  return t;
}

struct tokenizer_case {
  std::string text;
  std::vector<text::token_id> qwen3, llama3;
  std::string qwen3_decoded, llama3_decoded;
};

// cases/tokenizer-cases.json: what @huggingface/tokenizers produced for each text.
inline const std::vector<tokenizer_case>& tokenizer_cases() {
  static const std::vector<tokenizer_case> cases = [] {
    std::ifstream in(tokenizer_data_dir() + "/cases/tokenizer-cases.json");
    std::stringstream s;
    s << in.rdbuf();
    const auto j = nlohmann::json::parse(s.str());
    std::vector<tokenizer_case> out;
    for (const auto& c : j.at("cases")) {
      out.push_back(
          {c.at("text").get<std::string>(), c.at("qwen3").get<std::vector<text::token_id>>(),
           c.at("llama3").get<std::vector<text::token_id>>(),
           c.at("qwen3_decoded").get<std::string>(), c.at("llama3_decoded").get<std::string>()});
    }
    return out;
  }();
  return cases;
}

// Well-formed UTF-8 per RFC 3629, checked by decoding each code point and rejecting
// overlongs, surrogates and values past U+10FFFF.
inline bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t len;
    std::uint32_t cp, min;
    if (b < 0x80) {
      ++i;
      continue;
    } else if ((b & 0xE0) == 0xC0) {
      len = 2, cp = b & 0x1F, min = 0x80;
    } else if ((b & 0xF0) == 0xE0) {
      len = 3, cp = b & 0x0F, min = 0x800;
    } else if ((b & 0xF8) == 0xF0) {
      len = 4, cp = b & 0x07, min = 0x10000;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (c & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

}  // namespace courier::test
