#pragma once
// Where random prompts get their token ids: uniformly from [0, vocab_size), or, with a
// tokenizer, uniformly from the ids that are a token and not special (a random BOS, EOS or
// chat-control token in a prompt would change what the server does with it).
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "text/tokenizer/tokenizer.hpp"

namespace courier::bench_tool {

using text::token_id;

// Loads DIR/tokenizer.json, or PATH itself when it names a file. Throws text::tokenizer_error
// naming the file.
std::shared_ptr<const text::tokenizer> load_tokenizer(const std::string& path);

class token_sampler;

// The sampler the flags ask for:
// - `tokenizer_path` a tokenizer.json, or a model folder that has one: its ordinary tokens;
// - a model folder without one (a model served by token ids only): [0, vocab_size) with
//   vocab_size from `vocab_size`, else from the folder's config.json (ids only: text needs a
//   tokenizer);
// - no path: [0, vocab_size).
// Throws std::invalid_argument (or text::tokenizer_error) saying what is missing.
token_sampler sampler_for(const std::string& tokenizer_path, std::optional<std::int64_t> vocab_size,
                          bool needs_text);

// Invariants: without a tokenizer, allowed_ is empty and bound_ > 0; with one, allowed_ is
// sorted and non-empty.
class token_sampler {
 public:
  static token_sampler uniform(std::int64_t vocab_size);
  // Throws std::runtime_error when the tokenizer has no ordinary token at all.
  static token_sampler from_tokenizer(std::shared_ptr<const text::tokenizer> tok);

  std::vector<token_id> draw(std::mt19937_64& rng, std::size_t num_ids) const;

  bool has_tokenizer() const { return tok_ != nullptr; }
  // Decoded text, special tokens kept (there are none among drawn ids). Needs a tokenizer.
  std::string decode(const std::vector<token_id>& ids) const;
  std::size_t num_choices() const { return allowed_.empty() ? bound_ : allowed_.size(); }

 private:
  std::vector<token_id> allowed_;  // empty: every id below bound_
  std::uint32_t bound_ = 1;
  std::shared_ptr<const text::tokenizer> tok_;  // Owned jointly with the caller; may be null
};

}  // namespace courier::bench_tool
