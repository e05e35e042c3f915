#include "text/tokenizer/added_vocabulary.hpp"

#include <algorithm>

#include "text/tokenizer/char_class.hpp"
#include "text/tokenizer/utf8.hpp"

namespace courier::text {

namespace {

// The last code point of text[0, end) (valid UTF-8, end > 0), and where it starts.
char32_t last_char(std::string_view text, std::size_t end, std::size_t& start) {
  start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  std::size_t i = start;
  return utf8::decode(text, i);
}

bool ends_with_word(std::string_view text, std::size_t end) {
  std::size_t start;
  return end > 0 && is_word_char(last_char(text, end, start));
}

bool starts_with_word(std::string_view text, std::size_t begin) {
  if (begin >= text.size()) return false;
  return is_word_char(utf8::decode(text, begin));
}

}  // namespace

void added_vocabulary::trie::insert(std::string_view key, std::size_t token) {
  if (nodes.empty()) nodes.emplace_back();
  std::uint32_t at = 0;
  for (char ch : key) {
    const auto c = static_cast<unsigned char>(ch);
    auto& kids = nodes[at].children;
    auto it = std::lower_bound(kids.begin(), kids.end(), std::make_pair(c, std::uint32_t{0}));
    if (it != kids.end() && it->first == c) {
      at = it->second;
      continue;
    }
    const auto child = static_cast<std::uint32_t>(nodes.size());
    kids.insert(it, {c, child});
    nodes.emplace_back();  // invalidates `kids`; not used again
    at = child;
  }
  nodes[at].token = static_cast<std::int64_t>(token);
  first_byte[static_cast<unsigned char>(key[0])] = true;
}

std::pair<std::int64_t, std::size_t> added_vocabulary::trie::longest_at(std::string_view text,
                                                                        std::size_t pos) const {
  std::pair<std::int64_t, std::size_t> best{-1, 0};
  std::uint32_t at = 0;
  for (std::size_t i = pos; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto& kids = nodes[at].children;
    auto it = std::lower_bound(kids.begin(), kids.end(), std::make_pair(c, std::uint32_t{0}));
    if (it == kids.end() || it->first != c) break;
    at = it->second;
    if (nodes[at].token >= 0) best = {nodes[at].token, i + 1 - pos};
  }
  return best;
}

added_vocabulary::added_vocabulary(std::vector<added_token> tokens, const normalizer& norm)
    : tokens_(std::move(tokens)) {
  std::string buffer;
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    const added_token& t = tokens_[i];
    by_id_[t.id] = i;
    by_content_[t.content] = t.id;
    if (t.content.empty()) continue;  // matches nothing
    if (t.normalized) {
      const std::string key(norm.apply(t.content, buffer));
      if (!key.empty()) normalized_.insert(key, i);
    } else {
      raw_.insert(t.content, i);
    }
  }
}

void added_vocabulary::split(std::string_view text, bool normalized,
                             std::vector<text_span>& out) const {
  const trie& t = normalized ? normalized_ : raw_;
  if (t.nodes.empty()) {
    if (!text.empty()) out.push_back({0, text.size(), std::nullopt});
    return;
  }
  // Mirrors AddedVocabulary::find_matches in Hugging Face tokenizers, including its order of
  // operations when lstrip/rstrip make neighbouring spans touch.
  std::size_t start_offset = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (!t.first_byte[static_cast<unsigned char>(text[pos])]) {
      ++pos;
      continue;
    }
    const auto [index, length] = t.longest_at(text, pos);
    if (index < 0) {
      ++pos;
      continue;
    }
    const added_token& tok = tokens_[static_cast<std::size_t>(index)];
    std::size_t start = pos;
    std::size_t stop = pos + length;
    pos = stop;
    if (tok.single_word && (ends_with_word(text, start) || starts_with_word(text, stop))) continue;
    if (tok.lstrip) {
      std::size_t new_start = start;
      while (new_start > 0) {
        std::size_t char_start;
        if (!is_whitespace(last_char(text, new_start, char_start))) break;
        new_start = char_start;
      }
      start = std::max(new_start, start_offset);
    }
    if (tok.rstrip) {
      while (stop < text.size()) {
        std::size_t next = stop;
        if (!is_whitespace(utf8::decode(text, next))) break;
        stop = next;
      }
    }
    if (start_offset < start) out.push_back({start_offset, start, std::nullopt});
    out.push_back({start, stop, tok.id});
    start_offset = stop;
  }
  if (start_offset < text.size()) out.push_back({start_offset, text.size(), std::nullopt});
}

const added_token* added_vocabulary::find(std::uint32_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &tokens_[it->second];
}

std::optional<std::uint32_t> added_vocabulary::find(std::string_view content) const {
  auto it = by_content_.find(std::string(content));
  if (it == by_content_.end()) return std::nullopt;
  return it->second;
}

}  // namespace courier::text
