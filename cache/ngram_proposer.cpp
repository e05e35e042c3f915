#include "cache/ngram_proposer.hpp"

#include <algorithm>
#include <stdexcept>

namespace courier::cache {

void validate(const ngram_config& config) {
  if (config.min_n < 1 || config.max_n < config.min_n || config.max_candidates < 1) {
    throw std::invalid_argument("ngram_config: need 1 <= min_n <= max_n and max_candidates >= 1");
  }
}

std::size_t common_suffix_length(const token_id* a, std::size_t a_len, const token_id* b,
                                 std::size_t b_len, std::size_t cap) {
  const std::size_t limit = std::min({a_len, b_len, cap});
  std::size_t n = 0;
  while (n < limit && a[a_len - 1 - n] == b[b_len - 1 - n]) ++n;
  return n;
}

ngram_proposer::ngram_proposer(ngram_config config) : config_(config) {
  validate(config_);
}

std::vector<token_id> ngram_proposer::propose(token_span history, std::size_t max_len) const {
  const std::size_t len = history.size();
  if (max_len == 0 || len <= config_.min_n) return {};
  // An occurrence ending at `end` (exclusive) is followed by history[end]; end < len keeps it
  // earlier than the suffix itself. Ends are tried from the most recent; of each length the
  // first found is kept. Ends are taken 16 at a time, and a group in which no end follows the
  // last token is skipped with one branch-free pass (vectorised): the scan runs every decode
  // step over the whole history, and most positions fail on that first token.
  const token_id last = history[len - 1];
  std::size_t best_len = 0;
  std::size_t best_end = 0;
  constexpr std::size_t group = 16;
  for (std::size_t high = len - 1; high >= config_.min_n && best_len < config_.max_n;) {
    const std::size_t low = high >= config_.min_n + group - 1 ? high - (group - 1) : config_.min_n;
    // Ends [low, high] follow tokens [low - 1, high - 1]; a short last group is examined.
    unsigned any = high - low + 1 < group ? 1 : 0;
    if (any == 0) {
      const token_id* preceding = history.data() + (low - 1);
      for (std::size_t j = 0; j < group; ++j) any |= preceding[j] == last ? 1 : 0;
    }
    for (std::size_t end = high; any != 0 && end >= low; --end) {
      const std::size_t n =
          common_suffix_length(history.data(), end, history.data(), len, config_.max_n);
      if (n >= config_.min_n && n > best_len) {
        best_len = n;
        best_end = end;
        if (n == config_.max_n) break;
      }
    }
    high = low - 1;  // low >= min_n >= 1
  }
  if (best_len == 0) return {};
  const std::size_t stop = std::min(len, best_end + max_len);
  return std::vector<token_id>(history.begin() + best_end, history.begin() + stop);
}

}  // namespace courier::cache
