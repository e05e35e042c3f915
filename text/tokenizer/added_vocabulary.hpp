#pragma once
// Added tokens (tokenizer.json "added_tokens"): found in the text before pre-tokenization and
// emitted whole, as Hugging Face's AddedVocabulary does. Tokens with normalized=false are
// matched in the raw text; those with normalized=true in each normalized piece, against their
// normalized content. Matching is leftmost-longest and non-overlapping; lstrip/rstrip widen a
// match over neighbouring whitespace, single_word drops a match glued to a word character.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/tokenizer/normalizer.hpp"

namespace courier::text {

struct added_token {
  std::string content;
  std::uint32_t id = 0;
  bool special = false;      // skipped by decode(skip_special_tokens=true)
  bool lstrip = false;       // the match swallows whitespace on its left
  bool rstrip = false;       // ... and on its right
  bool single_word = false;  // only matches when not next to a word character
  bool normalized = true;    // matched after normalization
};

// A stretch of text: plain text when `id` is empty, else one added token (whose span may
// include whitespace that lstrip/rstrip swallowed).
struct text_span {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::optional<std::uint32_t> id;
};

class added_vocabulary {
 public:
  added_vocabulary() = default;
  added_vocabulary(std::vector<added_token> tokens, const normalizer& norm);

  // Appends the spans of `text` (valid UTF-8) to `out`, using the tokens with the given
  // `normalized` flag. Plain spans are never empty; an empty text gives no span.
  void split(std::string_view text, bool normalized, std::vector<text_span>& out) const;

  bool has_normalized_tokens() const { return !normalized_.nodes.empty(); }
  const added_token* find(std::uint32_t id) const;
  std::optional<std::uint32_t> find(std::string_view content) const;
  const std::vector<added_token>& tokens() const { return tokens_; }

 private:
  // A byte trie over token contents; node 0 is the root.
  struct trie {
    struct node {
      std::vector<std::pair<unsigned char, std::uint32_t>> children;  // sorted by byte
      std::int64_t token = -1;  // index into tokens_ of the token ending here
    };
    std::vector<node> nodes;
    bool first_byte[256] = {};

    void insert(std::string_view key, std::size_t token);
    // Longest token that starts at text[pos]: its index and length, or {-1, 0}.
    std::pair<std::int64_t, std::size_t> longest_at(std::string_view text, std::size_t pos) const;
  };

  std::vector<added_token> tokens_;
  std::unordered_map<std::uint32_t, std::size_t> by_id_;
  std::unordered_map<std::string, std::uint32_t> by_content_;
  trie raw_;         // normalized=false tokens, by content
  trie normalized_;  // normalized=true tokens, by normalized content
};

}  // namespace courier::text
