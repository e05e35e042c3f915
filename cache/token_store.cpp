#include "cache/token_store.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace courier::cache {

token_store::token_store(ngram_config config, std::size_t capacity_bytes)
    : config_(config), capacity_bytes_(capacity_bytes) {
  validate(config_);
}

std::uint64_t token_store::ngram_hash(const token_id* end) const {
  std::uint64_t h = 0x6a09e667f3bcc909ULL;
  for (const token_id* t = end - config_.min_n; t != end; ++t) {
    h = (h ^ *t) * 0x9e3779b97f4a7c15ULL;
    h ^= h >> 29;
  }
  return h;
}

void token_store::add(token_span tokens) {
  if (capacity_bytes_ < bytes_per_sequence) return;
  const std::size_t max_tokens = (capacity_bytes_ - bytes_per_sequence) / bytes_per_token;
  if (tokens.size() > max_tokens) tokens = tokens.from(tokens.size() - max_tokens);
  if (tokens.empty()) return;

  stored_sequence seq;
  seq.start = next_start_;
  seq.tokens.assign(tokens.begin(), tokens.end());
  seq.prev.assign(tokens.size(), no_position);
  // Position c is indexed when an n-gram ends just before it and a token follows it.
  for (std::size_t c = config_.min_n; c < tokens.size(); ++c) {
    const std::uint64_t position = seq.start + c;
    auto [it, added] = head_.emplace(ngram_hash(tokens.data() + c), position);
    if (!added) seq.prev[c] = std::exchange(it->second, position);
  }
  next_start_ += tokens.size();
  num_tokens_ += tokens.size();
  sequences_.push_back(std::move(seq));
  while (size_bytes() > capacity_bytes_) drop_oldest();
}

void token_store::drop_oldest() {
  const stored_sequence& seq = sequences_.front();
  const std::uint64_t end = seq.start + seq.tokens.size();
  for (std::size_t c = config_.min_n; c < seq.tokens.size(); ++c) {
    const auto it = head_.find(ngram_hash(seq.tokens.data() + c));
    // A head inside the oldest sequence means no live sequence has this n-gram any more.
    if (it != head_.end() && it->second < end) head_.erase(it);
  }
  num_tokens_ -= seq.tokens.size();
  sequences_.pop_front();
}

const token_store::stored_sequence& token_store::sequence_at(std::uint64_t position) const {
  const auto after =
      std::upper_bound(sequences_.begin(), sequences_.end(), position,
                       [](std::uint64_t p, const stored_sequence& s) { return p < s.start; });
  return *(after - 1);
}

std::vector<token_id> token_store::propose(token_span history, std::size_t max_len) const {
  if (max_len == 0 || history.size() < config_.min_n || sequences_.empty()) return {};
  const auto head = head_.find(ngram_hash(history.end()));
  if (head == head_.end()) return {};
  const std::uint64_t oldest = sequences_.front().start;
  const stored_sequence* best_seq = nullptr;
  std::size_t best_len = 0;
  std::size_t best_at = 0;
  std::uint64_t position = head->second;
  for (std::size_t tried = 0;
       tried < config_.max_candidates && position != no_position && position >= oldest; ++tried) {
    const stored_sequence& seq = sequence_at(position);
    const auto at = static_cast<std::size_t>(position - seq.start);
    const std::size_t n =
        common_suffix_length(seq.tokens.data(), at, history.data(), history.size(), config_.max_n);
    if (n >= config_.min_n && n > best_len) {  // n < min_n: a hash collision
      best_seq = &seq;
      best_len = n;
      best_at = at;
      if (n == config_.max_n) break;
    }
    position = seq.prev[at];
  }
  if (best_seq == nullptr) return {};
  const std::size_t stop = std::min(best_seq->tokens.size(), best_at + max_len);
  return std::vector<token_id>(best_seq->tokens.begin() + static_cast<std::ptrdiff_t>(best_at),
                               best_seq->tokens.begin() + static_cast<std::ptrdiff_t>(stop));
}

void token_store::check_invariants() const {
  auto violated = [](const std::string& what) {
    throw std::logic_error("token_store invariant: " + what);
  };
  if (size_bytes() > capacity_bytes_) violated("over capacity");
  std::size_t num_tokens = 0;
  std::uint64_t expected_start = sequences_.empty() ? 0 : sequences_.front().start;
  for (const stored_sequence& seq : sequences_) {
    if (seq.start != expected_start) violated("sequence starts are not consecutive");
    if (seq.tokens.empty() || seq.prev.size() != seq.tokens.size()) violated("bad sequence");
    expected_start += seq.tokens.size();
    num_tokens += seq.tokens.size();
    for (std::size_t c = 0; c < seq.tokens.size(); ++c) {
      const std::uint64_t p = seq.prev[c];
      if (p == no_position) continue;
      if (c < config_.min_n || p >= seq.start + c) violated("a chain link points forward");
    }
  }
  if (!sequences_.empty() && expected_start != next_start_) violated("next start is off");
  if (num_tokens != num_tokens_) violated("token count is off");
  const std::uint64_t oldest = sequences_.empty() ? next_start_ : sequences_.front().start;
  for (const auto& [hash, position] : head_) {
    if (position < oldest || position >= next_start_) violated("a head is not a live position");
    const stored_sequence& seq = sequence_at(position);
    const auto at = static_cast<std::size_t>(position - seq.start);
    if (at < config_.min_n || at >= seq.tokens.size()) violated("a head has no n-gram or no next");
    if (ngram_hash(seq.tokens.data() + at) != hash) violated("a head is filed under another hash");
  }
}

}  // namespace courier::cache
