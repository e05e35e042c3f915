// Proposals from a sequence's own history. Expected drafts are worked out by hand, and a
// random check compares with a brute-force search written here.
#include "cache/ngram_proposer.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <stdexcept>
#include <vector>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_cache_ngram_proposer {

using namespace courier::cache;

namespace {

using tokens = std::vector<token_id>;

// Longest n first, then the most recent occurrence: the definition, searched naively.
tokens brute_force(const tokens& h, std::size_t min_n, std::size_t max_n, std::size_t max_len) {
  for (std::size_t n = max_n; n >= min_n; --n) {
    if (h.size() <= n) continue;
    for (std::size_t end = h.size() - 1; end >= n; --end) {
      if (std::equal(h.end() - static_cast<std::ptrdiff_t>(n), h.end(),
                     h.begin() + static_cast<std::ptrdiff_t>(end - n))) {
        const std::size_t stop = std::min(h.size(), end + max_len);
        return tokens(h.begin() + static_cast<std::ptrdiff_t>(end),
                      h.begin() + static_cast<std::ptrdiff_t>(stop));
      }
    }
  }
  return {};
}

}  // namespace

TEST_CASE("ngram proposer: proposes what followed the most recent earlier occurrence", "[cache]") {
  const ngram_proposer p({1, 3, 16});
  // [1 2 3] occurs ending at 3 (then 9) and at 7 (then 8); the later one wins.
  const tokens history = {1, 2, 3, 9, 1, 2, 3, 8, 1, 2, 3};
  CHECK(p.propose(history, 2) == tokens{8, 1});
  CHECK(p.propose(history, 10) == tokens{8, 1, 2, 3});  // never past the end
}

TEST_CASE("ngram proposer: prefers the longest n-gram to a more recent shorter one", "[cache]") {
  const ngram_proposer p({1, 3, 16});
  // [5 6 7] recurs after position 0 (then 4); only [7] recurs more recently (then 0).
  const tokens history = {5, 6, 7, 4, 9, 7, 0, 5, 6, 7};
  CHECK(p.propose(history, 3) == tokens{4, 9, 7});
}

TEST_CASE("ngram proposer: proposes nothing unless at least min_n tokens recur", "[cache]") {
  const tokens history = {1, 2, 3, 1};
  CHECK(ngram_proposer({2, 4, 16}).propose(history, 4).empty());
  CHECK(ngram_proposer({1, 4, 16}).propose(history, 4) == tokens{2, 3, 1});
  CHECK(ngram_proposer({1, 4, 16}).propose(history, 0).empty());
  CHECK(ngram_proposer({1, 4, 16}).propose(tokens{7}, 4).empty());
  CHECK(ngram_proposer({1, 4, 16}).propose(tokens{}, 4).empty());
}

TEST_CASE("ngram proposer: an occurrence may overlap the suffix it matches", "[cache]") {
  // [4 4] ends at 2 and is followed by the last 4.
  CHECK(ngram_proposer({1, 2, 16}).propose(tokens{4, 4, 4}, 5) == tokens{4});
}

TEST_CASE("ngram proposer: a config with min_n 0 or max_n below min_n is rejected", "[cache]") {
  CHECK_THROWS_AS(ngram_proposer({0, 2, 16}), std::invalid_argument);
  CHECK_THROWS_AS(ngram_proposer({3, 2, 16}), std::invalid_argument);
  CHECK_THROWS_AS(ngram_proposer({1, 2, 0}), std::invalid_argument);
}

TEST_CASE("ngram proposer: common_suffix_length counts equal tokens from the ends", "[cache]") {
  const tokens a = {1, 2, 3, 4};
  const tokens b = {9, 3, 4};
  CHECK(common_suffix_length(a.data(), a.size(), b.data(), b.size(), 10) == 2);
  CHECK(common_suffix_length(a.data(), a.size(), b.data(), b.size(), 1) == 1);
  CHECK(common_suffix_length(a.data(), 3, b.data(), b.size(), 10) == 0);
  CHECK(common_suffix_length(a.data(), a.size(), a.data(), a.size(), 10) == 4);
}

TEST_CASE("ngram proposer: agrees with a brute-force search on random histories", "[cache]") {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    const std::size_t min_n = 1 + rng() % 3;
    const std::size_t max_n = min_n + rng() % 3;
    const std::size_t max_len = rng() % 6;
    tokens history(rng() % 100);
    const token_id vocab = round % 2 == 0 ? 4 : 40;  // many matches, or few
    for (token_id& t : history) t = rng() % vocab;
    INFO("round " << round);
    CHECK(ngram_proposer({min_n, max_n, 16}).propose(history, max_len) ==
          brute_force(history, min_n, max_n, max_len));
  }
}

}  // namespace courier_test_cache_ngram_proposer
