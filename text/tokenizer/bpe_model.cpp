#include "text/tokenizer/bpe_model.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "text/tokenizer/byte_level.hpp"
#include "text/tokenizer/tokenizer_error.hpp"
#include "text/tokenizer/utf8.hpp"

namespace courier::text {

bpe_model::bpe_model(const std::vector<std::pair<std::string, std::uint32_t>>& vocab,
                     const std::vector<std::pair<std::string, std::string>>& merges, options opts)
    : opts_(std::move(opts)) {
  std::uint32_t bound = 0;
  for (const auto& [text, id] : vocab) {
    if (id == no_id) throw tokenizer_error(fmt::format("token '{}' has an invalid id", text));
    bound = std::max(bound, id + 1);
  }
  tokens_.resize(bound);
  bytes_.resize(bound);
  present_.assign(bound, 0);
  std::size_t capacity = 16;
  while (capacity < vocab.size() * 2) capacity *= 2;
  table_.assign(capacity, table_slot{});
  table_mask_ = capacity - 1;
  for (const auto& [text, id] : vocab) {
    if (!present_[id]) ++num_tokens_;
    present_[id] = 1;
    tokens_[id] = text;
    std::optional<std::string> raw;
    if (opts_.byte_level) raw = byte_level::to_bytes(text);
    if (opts_.byte_level && !raw) {
      // Not spelled in the byte alphabet: BPE can never produce it; decode emits its text.
      bytes_[id] = text;
      unmapped_[text] = id;
      continue;
    }
    bytes_[id] = raw ? std::move(*raw) : text;
    insert_bytes(id);
    max_bytes_per_id_ = std::max(max_bytes_per_id_, bytes_[id].size());
  }
  // An id BPE emits is a vocabulary entry found in the word's bytes, one byte (byte fallback)
  // or the unk token for one character (at most 4 bytes of UTF-8), unless unknowns fuse.
  max_bytes_per_id_ = opts_.fuse_unk ? 0 : std::max<std::size_t>(max_bytes_per_id_, 4);
  for (int b = 0; b < 256; ++b) {
    const std::string one(1, static_cast<char>(b));
    byte_ids_[b] = opts_.byte_level ? find_bytes(one, hash_bytes(one)) : no_id;
    fallback_ids_[b] = token_to_id(fmt::format("<0x{:02X}>", b)).value_or(no_id);
  }
  if (opts_.unk_token) {
    unk_id_ = token_to_id(*opts_.unk_token);
    if (!unk_id_) {
      throw tokenizer_error(
          fmt::format("unk_token '{}' is not in the vocabulary", *opts_.unk_token));
    }
  }
  merges_.reserve(merges.size());
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    // Not a structured binding: C++17 lets no lambda capture one (clang refuses, gcc allows).
    const std::string& left = merges[rank].first;
    const std::string& right = merges[rank].second;
    auto id_of = [&](const std::string& token) {
      auto id = token_to_id(token);
      if (!id) {
        throw tokenizer_error(fmt::format("merge {} ('{} {}'): token '{}' is not in the vocabulary",
                                          rank, left, right, token));
      }
      return *id;
    };
    const std::uint32_t a = id_of(left), b = id_of(right), merged = id_of(left + right);
    merges_.insert(a, b, {static_cast<std::uint32_t>(rank), merged});
  }
}

void bpe_model::insert_bytes(std::uint32_t id) {
  const std::string& key = bytes_[id];
  const std::uint64_t hash = hash_bytes(key);
  const auto tag = static_cast<std::uint32_t>(hash >> 32);
  for (std::size_t i = hash & table_mask_;; i = (i + 1) & table_mask_) {
    table_slot& s = table_[i];
    if (s.id == no_id || (s.tag == tag && bytes_[s.id] == key)) {
      s = {tag, id};
      return;
    }
  }
}

std::uint32_t bpe_model::find_bytes(std::string_view key, std::uint64_t hash) const {
  const auto tag = static_cast<std::uint32_t>(hash >> 32);
  for (std::size_t i = hash & table_mask_;; i = (i + 1) & table_mask_) {
    const table_slot& s = table_[i];
    if (s.id == no_id) return no_id;
    if (s.tag == tag && bytes_[s.id] == key) return s.id;
  }
}

std::optional<std::uint32_t> bpe_model::token_to_id(std::string_view token) const {
  std::uint32_t id = no_id;
  if (opts_.byte_level) {
    if (auto raw = byte_level::to_bytes(token)) {
      id = find_bytes(*raw, hash_bytes(*raw));
    } else if (auto it = unmapped_.find(std::string(token)); it != unmapped_.end()) {
      id = it->second;
    }
  } else {
    id = find_bytes(token, hash_bytes(token));
  }
  if (id == no_id) return std::nullopt;
  return id;
}

const std::string* bpe_model::id_to_token(std::uint32_t id) const {
  return id < tokens_.size() && present_[id] ? &tokens_[id] : nullptr;
}

std::string_view bpe_model::token_bytes(std::uint32_t id) const {
  return id < bytes_.size() ? std::string_view(bytes_[id]) : std::string_view();
}

// An unknown character, as Hugging Face's BPE::merge_word treats it: its <0xNN> byte tokens
// when byte_fallback has them all, else the unk token (fused with a pending one when
// fuse_unk), else nothing. Note that byte tokens do not flush a pending unk: it follows them.
void bpe_model::add_unknown(std::string_view ch, std::vector<std::uint32_t>& symbols,
                            bool& pending_unk) const {
  if (opts_.byte_fallback) {
    bool all = true;
    for (char c : ch) all = all && fallback_ids_[static_cast<unsigned char>(c)] != no_id;
    if (all) {
      for (char c : ch) symbols.push_back(fallback_ids_[static_cast<unsigned char>(c)]);
      return;
    }
  }
  if (!unk_id_) return;
  if (pending_unk && !opts_.fuse_unk) symbols.push_back(*unk_id_);
  pending_unk = true;
}

void bpe_model::initial_symbols(std::string_view word, std::vector<std::uint32_t>& symbols) const {
  bool pending_unk = false;
  auto add_known = [&](std::uint32_t id) {
    if (pending_unk) symbols.push_back(*unk_id_);
    pending_unk = false;
    symbols.push_back(id);
  };
  if (opts_.byte_level) {
    for (char c : word) {
      const std::uint32_t id = byte_ids_[static_cast<unsigned char>(c)];
      if (id != no_id) {
        add_known(id);
      } else {
        // Hugging Face sees the byte's stand-in character here, so fall back on its bytes.
        add_unknown(byte_level::from_bytes(std::string_view(&c, 1)), symbols, pending_unk);
      }
    }
  } else {
    std::size_t i = 0;
    while (i < word.size()) {
      const std::size_t len = utf8::sequence_length(static_cast<unsigned char>(word[i]));
      const std::string_view ch = word.substr(i, len);
      i += len;
      const std::uint32_t id = find_bytes(ch, hash_bytes(ch));
      if (id != no_id) {
        add_known(id);
      } else {
        add_unknown(ch, symbols, pending_unk);
      }
    }
  }
  if (pending_unk) symbols.push_back(*unk_id_);
}

void bpe_model::encode_word(std::string_view word, std::vector<std::uint32_t>& out) const {
  if (word.empty()) return;
  const std::uint64_t hash = hash_bytes(word);
  if (opts_.ignore_merges) {
    const std::uint32_t id = find_bytes(word, hash);
    if (id != no_id) {
      out.push_back(id);
      return;
    }
  }
  if (cache_.find(word, hash, out)) return;
  thread_local std::vector<std::uint32_t> symbols;
  symbols.clear();
  initial_symbols(word, symbols);
  bpe_merge(symbols, merges_);
  cache_.insert(word, hash, symbols.data(), symbols.size());
  out.insert(out.end(), symbols.begin(), symbols.end());
}

}  // namespace courier::text
