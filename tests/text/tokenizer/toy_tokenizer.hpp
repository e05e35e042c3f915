#pragma once
// A small tokenizer.json built in code, for tests that need one component changed at a time.
// Byte-level BPE: the 256 byte tokens (ids 0..255, in GPT-2's byte alphabet), then a few merges.
#include <nlohmann/json.hpp>
#include <string>

#include "text/tokenizer/byte_level.hpp"
#include "text/tokenizer/tokenizer.hpp"

namespace courier::test {

inline nlohmann::json toy_tokenizer_json() {
  using nlohmann::json;
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) {
    vocab[text::byte_level::from_bytes(std::string(1, static_cast<char>(b)))] = b;
  }
  // Ġ is the space byte.
  const char* extra[] = {"he", "ll",          "hell", "hello",        "\xC4\xA0w",
                         "or", "\xC4\xA0wor", "ld",   "\xC4\xA0world"};
  int next = 256;
  for (const char* t : extra) vocab[t] = next++;  // ids 256..264
  json j = {{"version", "1.0"},
            {"truncation", nullptr},
            {"padding", nullptr},
            {"added_tokens", json::array({{{"id", 300},
                                           {"content", "<|end|>"},
                                           {"single_word", false},
                                           {"lstrip", false},
                                           {"rstrip", false},
                                           {"normalized", false},
                                           {"special", true}}})},
            {"normalizer", nullptr},
            {"pre_tokenizer",
             {{"type", "ByteLevel"},
              {"add_prefix_space", false},
              {"trim_offsets", true},
              {"use_regex", true}}},
            {"post_processor",
             {{"type", "ByteLevel"},
              {"add_prefix_space", true},
              {"trim_offsets", false},
              {"use_regex", true}}},
            {"decoder",
             {{"type", "ByteLevel"},
              {"add_prefix_space", true},
              {"trim_offsets", true},
              {"use_regex", true}}},
            {"model",
             {{"type", "BPE"},
              {"dropout", nullptr},
              {"unk_token", nullptr},
              {"continuing_subword_prefix", nullptr},
              {"end_of_word_suffix", nullptr},
              {"fuse_unk", false},
              {"byte_fallback", false},
              {"ignore_merges", false},
              {"vocab", vocab},
              {"merges", json::array({"h e", "l l", "he ll", "hell o", "\xC4\xA0 w", "o r",
                                      "\xC4\xA0w or", "l d", "\xC4\xA0wor ld"})}}}};
  return j;
}

inline text::tokenizer toy_tokenizer(const nlohmann::json& j, const std::string& config = "") {
  return text::tokenizer::from_json(j.dump(), config);
}

}  // namespace courier::test
