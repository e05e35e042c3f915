#pragma once
// Prompt-lookup drafting: propose the tokens that followed an earlier occurrence of the longest
// suffix n-gram. This file searches the sequence's own history; token_store searches earlier
// requests; shared_lookup_cache::propose tries this first, then the scope's store.
#include <cstddef>
#include <vector>

#include "cache/types.hpp"

namespace courier::cache {

struct ngram_config {
  std::size_t min_n = 1;            // speculative.prompt_lookup.min_ngram (>= 1)
  std::size_t max_n = 4;            // speculative.prompt_lookup.max_ngram (>= min_n)
  std::size_t max_candidates = 16;  // store search: most recent positions tried per proposal
};

// Throws std::invalid_argument unless 1 <= min_n <= max_n and max_candidates >= 1.
void validate(const ngram_config& config);

// How many tokens a[0, a_len) and b[0, b_len) have in common at their ends, at most `cap`.
std::size_t common_suffix_length(const token_id* a, std::size_t a_len, const token_id* b,
                                 std::size_t b_len, std::size_t cap);

// Invariants: the config is valid (checked on construction).
class ngram_proposer {
 public:
  explicit ngram_proposer(ngram_config config);

  const ngram_config& config() const { return config_; }

  // Finds the longest n in [min_n, max_n] such that the last n tokens of `history` occur
  // earlier in it with at least one token after them; among occurrences of that length, the
  // most recent. Returns up to max_len tokens that followed it; empty when there is none.
  std::vector<token_id> propose(token_span history, std::size_t max_len) const;

 private:
  ngram_config config_;
};

}  // namespace courier::cache
