#pragma once
// The parts of a loaded tokenizer; private to text/tokenizer (tokenizer.cpp runs them,
// tokenizer_loader.cpp builds them).
#include <optional>

#include "text/tokenizer/added_vocabulary.hpp"
#include "text/tokenizer/bpe_model.hpp"
#include "text/tokenizer/decoder.hpp"
#include "text/tokenizer/normalizer.hpp"
#include "text/tokenizer/post_processor.hpp"
#include "text/tokenizer/pre_tokenizer.hpp"
#include "text/tokenizer/tokenizer.hpp"

namespace courier::text {

struct tokenizer::state {
  normalizer norm;
  pre_tokenizer pre;
  std::optional<bpe_model> model;  // always set once loaded
  added_vocabulary added;
  post_processor post;
  decoder dec;
  tokenizer_config config;
  special_token_ids specials;
  std::size_t vocab_size = 0;
  token_id id_bound = 0;
  std::size_t max_text_bytes_per_id = 0;  // tokenizer::max_text_bytes_per_id()
};

// Builds the state from file contents; throws tokenizer_error naming `origin` or
// "tokenizer_config.json".
std::unique_ptr<const tokenizer::state> load_tokenizer_state(std::string_view tokenizer_json,
                                                             std::string_view config_json,
                                                             const std::string& origin);

}  // namespace courier::text
