#pragma once
// What courier reads from tokenizer_config.json (optional, beside tokenizer.json): the
// special tokens a model declares and the decode-time clean-up switch. Informational except
// for clean_up_tokenization_spaces (applied by decode()) and the special-token names (their ids
// are skipped by decode(skip_special_tokens=true), as transformers' all_special_ids are).
// add_bos_token / add_eos_token are reported, never applied: encode() adds what tokenizer.json's
// post_processor says, as Hugging Face's tokenizers library does.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace courier::text {

struct tokenizer_config {
  std::optional<std::string> bos_token, eos_token, unk_token, pad_token;
  std::vector<std::string> additional_special_tokens;
  std::optional<bool> add_bos_token, add_eos_token;
  // transformers' default (and courier's) is false when the key is absent; note that
  // @huggingface/tokenizers (JS) defaults to true.
  bool clean_up_tokenization_spaces = false;
};

// Parses tokenizer_config.json; empty text gives the defaults. Throws tokenizer_error
// ("tokenizer_config.json: ...") on bad JSON.
tokenizer_config parse_tokenizer_config(std::string_view json);

}  // namespace courier::text
