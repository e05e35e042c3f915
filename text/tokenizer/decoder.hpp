#pragma once
// The decoder stage, reduced to what streaming needs: every token id contributes a fixed byte
// string, computed once at load time from the decoder of tokenizer.json, and decoded text is
// those strings concatenated, repaired as UTF-8 (utf8::append_repaired), then optionally
// cleaned up (cleanup.hpp). Each supported decoder fits this shape; that is what lets
// incremental_detokenizer reproduce decode() exactly, token by token.
//
// Supported: ByteLevel (each character of a token back to its byte; a token with a character
// outside GPT-2's byte alphabet contributes its own UTF-8). Added tokens contribute their
// content verbatim, as @huggingface/tokenizers (the reference of the fixtures) does.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace courier::text {

class decoder {
 public:
  decoder() = default;
  // bytes[id]: what id contributes; special[id]: skipped under skip_special_tokens.
  decoder(const std::vector<std::string>& bytes, std::vector<char> special);

  // The bytes of `id`; empty for an id that maps to no token (skipped, as Hugging Face does).
  std::string_view bytes(std::uint32_t id) const {
    if (id >= special_.size()) return {};
    return std::string_view(arena_).substr(offsets_[id], offsets_[id + 1] - offsets_[id]);
  }
  bool is_special(std::uint32_t id) const { return id < special_.size() && special_[id]; }

  // Appends the bytes of `ids` (skipping special ones if asked), before UTF-8 repair.
  void append_bytes(const std::uint32_t* ids, std::size_t num_ids, bool skip_special,
                    std::string& out) const;

 private:
  std::string arena_;                   // every entry, back to back
  std::vector<std::uint32_t> offsets_;  // id -> start in arena_; one more entry for the end
  std::vector<char> special_;
};

}  // namespace courier::text
