#include "cache/ngram_proposer.hpp"

#include <algorithm>
#include <stdexcept>

namespace courier::cache {

void validate(const ngram_config& config) {
  if (config.min_n < 1 || config.max_n < config.min_n || config.max_candidates < 1) {
    throw std::invalid_argument(
        "ngram_config: need 1 <= min_n <= max_n and max_candidates >= 1");
  }
}

std::size_t common_suffix_length(const token_id* a, std::size_t a_len, const token_id* b,
                                 std::size_t b_len, std::size_t cap) {
  const std::size_t limit = std::min({a_len, b_len, cap});
  std::size_t n = 0;
  while (n < limit && a[a_len - 1 - n] == b[b_len - 1 - n]) ++n;
  return n;
}

ngram_proposer::ngram_proposer(ngram_config config) : config_(config) { validate(config_); }

std::vector<token_id> ngram_proposer::propose(token_span history, std::size_t max_len) const {
  const std::size_t len = history.size();
  if (max_len == 0 || len <= config_.min_n) return {};
  // An occurrence ending at `end` (exclusive) is followed by history[end]; end < len keeps it
  // earlier than the suffix itself. Scan from the most recent, keep the first of each length.
  std::size_t best_len = 0;
  std::size_t best_end = 0;
  for (std::size_t end = len - 1; end >= config_.min_n; --end) {
    const std::size_t n =
        common_suffix_length(history.data(), end, history.data(), len, config_.max_n);
    if (n >= config_.min_n && n > best_len) {
      best_len = n;
      best_end = end;
      if (n == config_.max_n) break;
    }
  }
  if (best_len == 0) return {};
  const std::size_t stop = std::min(len, best_end + max_len);
  return std::vector<token_id>(history.begin() + best_end, history.begin() + stop);
}

}  // namespace courier::cache
