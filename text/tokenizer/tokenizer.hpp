#pragma once
// A Hugging Face tokenizer (tokenizer.json + tokenizer_config.json) for byte-level BPE models:
// Qwen2/2.5/3, Llama 3, GPT-2 style. See README.md for what is supported and the contracts.
//
// Thread-safety: a loaded tokenizer is immutable apart from an internal lock-free cache, so one
// instance may be shared (e.g. as std::shared_ptr<const tokenizer>) by any number of threads.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text/tokenizer/tokenizer_config.hpp"
#include "text/tokenizer/tokenizer_error.hpp"

namespace courier::text {

using token_id = std::uint32_t;

// Ids of the special tokens tokenizer_config.json names (when it names them and they exist).
struct special_token_ids {
  std::optional<token_id> bos, eos, unk, pad;
};

class tokenizer {
 public:
  // Loads `tokenizer_json_path` and, if present, tokenizer_config.json in the same folder.
  // Throws tokenizer_error naming the file on an unreadable file, bad JSON or an unsupported
  // component.
  static tokenizer load(const std::string& tokenizer_json_path);
  // The same from file contents; `config_json` may be empty (no config). `origin` names the
  // tokenizer.json in error messages (config errors name "tokenizer_config.json").
  static tokenizer from_json(std::string_view tokenizer_json, std::string_view config_json,
                             const std::string& origin = "tokenizer.json");

  tokenizer(tokenizer&&) noexcept;
  tokenizer& operator=(tokenizer&&) noexcept;
  ~tokenizer();

  // Text to ids. Invalid UTF-8 is first repaired (each maximal invalid subpart becomes
  // U+FFFD, as Hugging Face does), so any byte string is accepted. Added tokens in the text
  // are matched; with add_special_tokens the post_processor's ids (e.g. BOS) are added.
  std::vector<token_id> encode(std::string_view text, bool add_special_tokens = true) const;

  // As encode(), but gives up, returning nullopt, once the result would have more than
  // max_ids ids: a server refusing a prompt longer than the context need not encode all of it.
  // Words are measured before BPE runs on them (a word of n bytes is at least
  // ceil(n / longest token) ids), so an oversized text costs about its normalization and
  // pre-tokenization, not its BPE. Otherwise the result is exactly encode()'s.
  static constexpr std::size_t no_limit = static_cast<std::size_t>(-1);
  std::optional<std::vector<token_id>> encode_at_most(std::string_view text, std::size_t max_ids,
                                                      bool add_special_tokens = true) const;

  // The most bytes of input text that one id of encode() stands for, or 0 when nothing bounds
  // it: a text of n bytes is then at least n / max_text_bytes_per_id() ids, which lets a server
  // refuse a prompt by its length alone. It covers the longest vocabulary and added token,
  // byte fallback and unknown characters, and normalization's shrinking (NFC: 3x); it is 0
  // when an unknown run fuses into one id, an added token swallows whitespace (lstrip or
  // rstrip), or a Split removes what it matches.
  std::size_t max_text_bytes_per_id() const;

  // Ids to text, always valid UTF-8. Ids that map to no token contribute nothing; a byte
  // sequence that is not valid UTF-8 becomes U+FFFD (maximal subparts).
  std::string decode(const token_id* ids, std::size_t num_ids,
                     bool skip_special_tokens = false) const;
  std::string decode(const std::vector<token_id>& ids, bool skip_special_tokens = false) const {
    return decode(ids.data(), ids.size(), skip_special_tokens);
  }

  std::optional<token_id> token_to_id(std::string_view token) const;  // added tokens first
  std::optional<std::string> id_to_token(token_id id) const;          // as spelled in the file
  std::size_t vocab_size() const;      // distinct ids: the model's plus the added tokens'
  token_id id_bound() const;           // one past the largest id
  bool is_special(token_id id) const;  // skipped by skip_special_tokens
  const special_token_ids& special_ids() const;
  const tokenizer_config& config() const;

  // For incremental_detokenizer: the bytes `id` adds to the decoded stream before UTF-8
  // repair (empty for an unknown id), and whether decode() cleans up spaces afterwards.
  std::string_view token_bytes(token_id id) const;
  bool cleans_up_spaces() const;

  struct state;  // defined in tokenizer_state.hpp

 private:
  explicit tokenizer(std::unique_ptr<const state> s);
  std::unique_ptr<const state> state_;
};

}  // namespace courier::text
