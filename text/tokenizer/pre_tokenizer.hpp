#pragma once
// The pre_tokenizer stage: splits normalized text into the pieces ("words") that BPE runs on.
// Supported: Split (regex or literal; all five behaviours; invert), ByteLevel (add_prefix_space,
// use_regex with GPT-2's pattern) and a Sequence of those. ByteLevel's byte-to-char mapping is
// not applied to the text: the BPE model works on raw bytes (see byte_level.hpp).
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text/tokenizer/regex.hpp"

namespace courier::text {

// What happens to a Split's matches (Hugging Face's SplitDelimiterBehavior).
enum class split_behavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };

// A stretch of a piece while a Split applies its behaviour.
struct split_part {
  std::size_t begin, end;
  bool flag;  // "is a match" before the behaviour is applied, "remove" after
};

// Reused buffers of one encode call; the views pre_tokenizer::split returns may point into it.
struct pre_tokenizer_scratch {
  std::vector<std::string_view> current, next;
  std::vector<match_span> matches;
  std::vector<split_part> parts, merged;
  std::deque<std::string> prefixed;  // pieces that got a prefix space
};

class pre_tokenizer {
 public:
  struct split_step {
    regex pattern;
    split_behavior behavior = split_behavior::isolated;
    bool invert = false;
  };
  struct byte_level_step {
    bool add_prefix_space = false;
    bool use_regex = true;
  };

  pre_tokenizer() = default;  // no pre-tokenization: the whole text is one piece
  void add_split(split_step step);
  void add_byte_level(byte_level_step step);  // must be the last step

  // True when a ByteLevel step is present: the model then works on bytes.
  bool byte_level() const { return byte_level_.has_value(); }
  // True when a Split drops its matches (behavior Removed): the pieces then hold less text
  // than the input, without bound.
  bool removes_text() const;

  // Splits `text` into non-empty pieces, left to right. The views point into `text` or into
  // `scratch`, and stay valid until the next call with the same scratch.
  const std::vector<std::string_view>& split(std::string_view text,
                                             pre_tokenizer_scratch& scratch) const;

 private:
  void apply_split(const split_step& step, std::string_view piece,
                   pre_tokenizer_scratch& scratch) const;

  std::vector<split_step> splits_;
  std::optional<byte_level_step> byte_level_;
  std::optional<regex> gpt2_;  // ByteLevel's own pattern, when use_regex
};

}  // namespace courier::text
