#include "text/tokenizer/bpe_merge.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <string>
#include <vector>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_tokenizer_bpe_merge {

using courier::text::merge_table;

namespace {

// A random merge list over the alphabet {a, b, c}: each rule joins two existing tokens.
struct toy_bpe {
  std::vector<std::string> tokens{"a", "b", "c"};
  std::vector<std::pair<std::uint32_t, std::uint32_t>> rules;  // by rank
  merge_table table;

  explicit toy_bpe(std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::map<std::string, std::uint32_t> ids{{"a", 0}, {"b", 1}, {"c", 2}};
    for (int i = 0; i < 40; ++i) {
      std::uniform_int_distribution<std::size_t> pick(0, tokens.size() - 1);
      const auto l = static_cast<std::uint32_t>(pick(rng));
      const auto r = static_cast<std::uint32_t>(pick(rng));
      const std::string joined = tokens[l] + tokens[r];
      if (joined.size() > 6 || table.find(l, r).rank != merge_table::no_rank) continue;
      auto [it, fresh] = ids.emplace(joined, static_cast<std::uint32_t>(tokens.size()));
      if (fresh) tokens.push_back(joined);
      table.insert(l, r, {static_cast<std::uint32_t>(rules.size()), it->second});
      rules.emplace_back(l, r);
    }
  }

  // The definition, slowly: merge the lowest-ranked adjacent pair, leftmost first, until none.
  std::vector<std::uint32_t> reference(std::vector<std::uint32_t> s) const {
    for (;;) {
      std::size_t best = 0;
      std::uint32_t best_rank = merge_table::no_rank;
      for (std::size_t i = 0; i + 1 < s.size(); ++i) {
        for (std::size_t rank = 0; rank < rules.size(); ++rank) {
          if (rules[rank] == std::make_pair(s[i], s[i + 1]) && rank < best_rank) {
            best_rank = static_cast<std::uint32_t>(rank);
            best = i;
          }
        }
      }
      if (best_rank == merge_table::no_rank) return s;
      s[best] = table.find(s[best], s[best + 1]).merged_id;
      s.erase(s.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    }
  }
};

}  // namespace

TEST_CASE("bpe merge: scan and heap both apply the lowest rank, leftmost first", "[text]") {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    const toy_bpe bpe(seed);
    std::mt19937 rng(seed * 977);
    std::uniform_int_distribution<int> len(0, 120), sym(0, 2);
    for (int iter = 0; iter < 60; ++iter) {
      std::vector<std::uint32_t> word;
      for (int i = len(rng); i > 0; --i) word.push_back(static_cast<std::uint32_t>(sym(rng)));
      const auto want = bpe.reference(word);
      auto scan = word, heap = word, either = word;
      courier::text::bpe_merge_scan(scan, bpe.table);
      courier::text::bpe_merge_heap(heap, bpe.table);
      courier::text::bpe_merge(either, bpe.table);
      INFO("seed " << seed << " iteration " << iter << " length " << word.size());
      REQUIRE(scan == want);
      REQUIRE(heap == want);
      REQUIRE(either == want);
    }
  }
}

TEST_CASE("bpe merge: a later rule for the same pair replaces the earlier one", "[text]") {
  merge_table t;
  t.insert(1, 2, {5, 10});
  t.insert(1, 2, {7, 11});
  CHECK(t.size() == 1);
  CHECK(t.find(1, 2).rank == 7);
  CHECK(t.find(1, 2).merged_id == 11);
  CHECK(t.find(2, 1).rank == merge_table::no_rank);
}

TEST_CASE("bpe merge: a 200k-symbol word merges in well under a second", "[text]") {
  // Not a speed assertion: a quadratic merge would take minutes here and time the test out.
  merge_table t;
  t.insert(0, 0, {0, 1});  // a a -> aa
  t.insert(1, 1, {1, 2});  // aa aa -> aaaa
  std::vector<std::uint32_t> word(200000, 0);
  courier::text::bpe_merge(word, t);
  CHECK(word.size() == 50000);
  CHECK(word.front() == 2);
}

}  // namespace courier_test_text_tokenizer_bpe_merge
