#pragma once
// The BPE model of tokenizer.json: the vocabulary, the merge rules, and the options
// (ignore_merges, byte_fallback, unk_token, fuse_unk). With a byte-level pre-tokenizer the
// model works on raw bytes: vocabulary strings are converted from GPT-2's byte alphabet once,
// here, so encoding never maps characters.
//
// Invariants: every merge's operands and result are in the vocabulary (checked at build);
// token_bytes(id) is what decode() emits for id (the raw bytes of a byte-level token, else its
// text); encode_word() is a pure function of its input (the cache never changes a result).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "text/tokenizer/bpe_cache.hpp"
#include "text/tokenizer/bpe_merge.hpp"

namespace courier::text {

class bpe_model {
 public:
  struct options {
    bool byte_level = false;     // inputs are raw bytes, vocabulary in GPT-2's byte alphabet
    bool ignore_merges = false;  // a word that is itself in the vocabulary is one token
    bool byte_fallback = false;  // an unknown character becomes its <0xNN> byte tokens
    bool fuse_unk = false;       // consecutive unknown characters share one unk token
    std::optional<std::string> unk_token;
  };

  // `vocab` as in tokenizer.json (token text -> id), `merges` in rank order. Throws
  // tokenizer_error (message without a file name) on a merge or unk token not in `vocab`.
  bpe_model(const std::vector<std::pair<std::string, std::uint32_t>>& vocab,
            const std::vector<std::pair<std::string, std::string>>& merges, options opts);

  // Appends the ids of one pre-tokenized word (valid UTF-8 unless byte_level).
  void encode_word(std::string_view word, std::vector<std::uint32_t>& out) const;

  std::optional<std::uint32_t> token_to_id(std::string_view token) const;  // as in the file
  const std::string* id_to_token(std::uint32_t id) const;                  // null if none
  std::string_view token_bytes(std::uint32_t id) const;  // empty for an unknown id
  std::size_t size() const { return num_tokens_; }
  std::uint32_t id_bound() const { return static_cast<std::uint32_t>(tokens_.size()); }
  // The most bytes of a word that one id stands for, or 0 when there is no bound (fuse_unk: a
  // run of unknown characters is one id). A word of n bytes encodes to at least
  // ceil(n / max_bytes_per_id()) ids: what lets encoding stop before BPE (tokenizer.hpp).
  std::size_t max_bytes_per_id() const { return max_bytes_per_id_; }

 private:
  static constexpr std::uint32_t no_id = 0xFFFFFFFFu;
  struct table_slot {
    std::uint32_t tag = 0;  // high bits of the key's hash
    std::uint32_t id = no_id;
  };

  // Vocabulary lookup by the bytes BPE sees (raw bytes when byte-level); no_id if absent.
  std::uint32_t find_bytes(std::string_view key, std::uint64_t hash) const;
  void insert_bytes(std::uint32_t id);
  // The symbols a word starts as, with Hugging Face's unk and byte-fallback rules.
  void initial_symbols(std::string_view word, std::vector<std::uint32_t>& symbols) const;
  void add_unknown(std::string_view ch, std::vector<std::uint32_t>& symbols,
                   bool& pending_unk) const;

  options opts_;
  std::vector<std::string> tokens_;  // id -> text as in the file ("" for unused ids)
  std::vector<std::string> bytes_;   // id -> what BPE and decode see
  std::vector<char> present_;        // id -> in the vocabulary
  std::size_t num_tokens_ = 0;
  std::size_t max_bytes_per_id_ = 0;
  // bytes -> id: open addressing, keys compared through bytes_.
  std::vector<table_slot> table_;
  std::size_t table_mask_ = 0;
  // Byte-level tokens that are not in the byte alphabet: reachable by token_to_id only.
  std::unordered_map<std::string, std::uint32_t> unmapped_;
  std::uint32_t byte_ids_[256];      // byte-level: the id of each single byte, or no_id
  std::uint32_t fallback_ids_[256];  // the id of each <0xNN> token, or no_id
  merge_table merges_;
  std::optional<std::uint32_t> unk_id_;
  bpe_cache cache_;
};

}  // namespace courier::text
