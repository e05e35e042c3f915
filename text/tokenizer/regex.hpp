#pragma once
// A compiled PCRE2 pattern (UTF + UCP, JIT when available) that lists match positions.
// Patterns come from tokenizer.json, written for Oniguruma; the constructs real tokenizers
// use ((?i:...), \p{L}, \s, lookahead, possessive and bounded repeats) mean the same in PCRE2.
#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

namespace courier::text {

using match_span = std::pair<std::size_t, std::size_t>;  // [begin, end) byte offsets

class regex {
 public:
  // `literal`: match `pattern` as plain text (a Split's {"String": ...}). Throws tokenizer_error
  // (message without a file name; the loader adds it) when PCRE2 rejects the pattern.
  regex(std::string_view pattern, bool literal);
  regex(regex&& other) noexcept;
  regex& operator=(regex&& other) noexcept;
  regex(const regex&) = delete;
  regex& operator=(const regex&) = delete;
  ~regex();

  // Replaces `out` with every non-overlapping match in `text`, left to right. `text` must be
  // valid UTF-8 (not re-checked). An empty match is reported and the search resumes one
  // character later. Thread-safe: scratch space is per thread.
  void find_all(std::string_view text, std::vector<match_span>& out) const;

 private:
  void* code_ = nullptr;  // Owned pcre2_code_8.
  bool jit_ = false;
};

}  // namespace courier::text
