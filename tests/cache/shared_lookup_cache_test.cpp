// The shared lookup cache: scope isolation, the LRU scope drop, the byte bound, proposals.
#include "cache/shared_lookup_cache.hpp"

#include <catch2/catch.hpp>

#include <deque>
#include <map>
#include <random>
#include <string>
#include <vector>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_cache_shared_lookup_cache {

using namespace courier::cache;

namespace {

using tokens = std::vector<token_id>;

const lookup_scope team_a{"llama", "tok", "", "team-a"};
const lookup_scope team_b{"llama", "tok", "", "team-b"};
const lookup_scope team_c{"llama", "tok", "", "team-c"};

std::size_t bytes_for(std::size_t num_sequences, std::size_t num_tokens) {
  return num_sequences * token_store::bytes_per_sequence +
         num_tokens * token_store::bytes_per_token;
}

shared_lookup_config config(std::size_t capacity_bytes, std::size_t max_scopes) {
  return {capacity_bytes, max_scopes, ngram_config{1, 3, 1000}, 0};  // tiny shares allowed
}

}  // namespace

TEST_CASE("shared lookup: a scope never reads another scope's tokens", "[cache]") {
  shared_lookup_cache cache(config(1 << 20, 4));
  cache.add(team_a, tokens{1, 2, 3, 4, 5});
  CHECK(cache.propose(team_a, tokens{9, 2, 3}, 2) == tokens{4, 5});
  CHECK(cache.propose(team_b, tokens{9, 2, 3}, 2).empty());
  for (lookup_scope other : {team_a, team_a, team_a}) {
    other.model = "qwen";
    CHECK(cache.propose(other, tokens{9, 2, 3}, 2).empty());
  }
  lookup_scope other_tokenizer = team_a;
  other_tokenizer.tokenizer = "tok2";
  lookup_scope other_adapter = team_a;
  other_adapter.adapter = "lora-1";
  CHECK(cache.propose(other_tokenizer, tokens{9, 2, 3}, 2).empty());
  CHECK(cache.propose(other_adapter, tokens{9, 2, 3}, 2).empty());
  CHECK(cache.num_scopes() == 1);
  cache.check_invariants();
}

TEST_CASE("shared lookup: a scope's tokens are unchanged by what other scopes add", "[cache]") {
  shared_lookup_cache cache(config(bytes_for(1, 4) * 2, 2));  // a share: one 4-token sequence
  cache.add(team_a, tokens{1, 2, 3, 4});
  const std::size_t a_bytes = cache.find(team_a)->size_bytes();
  for (token_id t = 10; t < 30; t += 4) cache.add(team_b, tokens{t, t + 1, t + 2, t + 3});
  CHECK(cache.find(team_a)->size_bytes() == a_bytes);
  CHECK(cache.propose(team_a, tokens{2}, 2) == tokens{3, 4});
  // team-b kept only its newest sequence, within its own share.
  CHECK(cache.propose(team_b, tokens{10}, 2).empty());
  CHECK(cache.propose(team_b, tokens{22}, 2).empty());
  CHECK(cache.propose(team_b, tokens{26}, 2) == tokens{27, 28});
  CHECK(cache.size_bytes() <= cache.config().capacity_bytes);
  cache.check_invariants();
}

TEST_CASE("shared lookup: own history comes first, then the scope's store", "[cache]") {
  shared_lookup_cache cache(config(1 << 20, 4));
  cache.add(team_a, tokens{5, 6, 7});
  // The history itself has [5] followed by 9: that wins over the store's 6 7.
  CHECK(cache.propose(team_a, tokens{5, 9, 5}, 2) == tokens{9, 5});
  CHECK(cache.propose(team_a, tokens{1, 5}, 2) == tokens{6, 7});
}

TEST_CASE(
    "shared lookup: a new scope beyond the limit drops the least recently used scope "
    "whole",
    "[cache]") {
  shared_lookup_cache cache(config(1 << 20, 2));
  cache.add(team_a, tokens{1, 2, 3});
  cache.add(team_b, tokens{4, 5, 6});
  CHECK(cache.propose(team_a, tokens{1}, 2) == tokens{2, 3});  // team-a is now the more recent
  cache.add(team_c, tokens{7, 8, 9});
  CHECK(cache.num_scopes() == 2);
  CHECK_FALSE(cache.contains(team_b));
  CHECK(cache.propose(team_b, tokens{4}, 2).empty());
  CHECK(cache.propose(team_a, tokens{1}, 2) == tokens{2, 3});
  CHECK(cache.propose(team_c, tokens{7}, 2) == tokens{8, 9});
  cache.check_invariants();
}

TEST_CASE("shared lookup: without a tenant nothing is stored or read", "[cache]") {
  shared_lookup_cache cache(config(1 << 20, 2));
  const lookup_scope no_tenant{"llama", "tok", "", ""};
  cache.add(no_tenant, tokens{1, 2, 3});
  CHECK(cache.num_scopes() == 0);
  CHECK(cache.propose(no_tenant, tokens{1}, 2).empty());
  CHECK(cache.propose(no_tenant, tokens{1, 2, 1}, 2) == tokens{2, 1});  // its own history
}

TEST_CASE("shared lookup: a share too small for one request of min_scope_tokens is refused, "
          "naming both keys",
          "[cache]") {
  shared_lookup_config c{1 << 20, 4, ngram_config{2, 4, 16}};  // 1 MB, 4 scopes: 256 KB each
  CHECK(shared_lookup_config_error(c).empty());
  CHECK_NOTHROW(shared_lookup_cache(c));
  // One request of 1024 tokens costs 1024 * bytes_per_token + bytes_per_sequence.
  const std::size_t need = 1024 * token_store::bytes_per_token + token_store::bytes_per_sequence;
  c.max_scopes = (1 << 20) / need;  // each share still holds one
  CHECK(shared_lookup_config_error(c).empty());
  c.max_scopes += 1;  // now none does
  const std::string error = shared_lookup_config_error(c);
  CHECK_THAT(error, Catch::Contains("speculative.shared_cache_mb") &&
                        Catch::Contains("speculative.shared_cache_scopes " +
                                        std::to_string(c.max_scopes)));
  CHECK_THROWS_WITH(shared_lookup_cache(c), error);
  c.capacity_bytes = 0;  // off: nothing to refuse
  CHECK(shared_lookup_config_error(c).empty());
}

TEST_CASE("shared lookup: switched off, it stores nothing but still drafts from own history",
          "[cache]") {
  shared_lookup_cache cache(config(0, 4));
  CHECK_FALSE(cache.enabled());
  cache.add(team_a, tokens{1, 2, 3});
  CHECK(cache.num_scopes() == 0);
  CHECK(cache.propose(team_a, tokens{1, 2, 1}, 2) == tokens{2, 1});
}

namespace {

// The model: per scope, live sequences oldest first, the share applied by hand, and proposals
// by brute force (longest n, then the most recent position, never past a sequence's end).
struct scope_model {
  std::deque<tokens> sequences;
  std::size_t bytes() const {
    std::size_t n = 0;
    for (const tokens& s : sequences) n += s.size();
    return bytes_for(sequences.size(), n);
  }
};

tokens brute_force(const std::deque<tokens>& store, const tokens& h, std::size_t min_n,
                   std::size_t max_n, std::size_t max_len) {
  for (std::size_t n = max_n; n >= min_n; --n) {
    if (h.size() < n) continue;
    for (auto seq = store.rbegin(); seq != store.rend(); ++seq) {
      for (std::size_t c = seq->size(); c-- > n;) {
        if (std::equal(h.end() - static_cast<std::ptrdiff_t>(n), h.end(),
                       seq->begin() + static_cast<std::ptrdiff_t>(c - n))) {
          const std::size_t stop = std::min(seq->size(), c + max_len);
          return tokens(seq->begin() + static_cast<std::ptrdiff_t>(c),
                        seq->begin() + static_cast<std::ptrdiff_t>(stop));
        }
      }
    }
  }
  return {};
}

}  // namespace

TEST_CASE("shared lookup: random adds and proposals agree with a model, within every bound",
          "[cache]") {
  std::mt19937 rng(GENERATE(1u, 2u, 3u));
  const std::size_t max_scopes = 3;
  const std::size_t share = bytes_for(3, 40);
  shared_lookup_cache cache(config(share * max_scopes, max_scopes));
  const std::vector<lookup_scope> scopes = {team_a, team_b, team_c, {"m", "t", "a", "team-a"}};
  std::map<std::size_t, scope_model> model;
  std::vector<std::size_t> lru;  // most recent first
  auto touch = [&](std::size_t s) {
    lru.erase(std::remove(lru.begin(), lru.end(), s), lru.end());
    lru.insert(lru.begin(), s);
  };
  for (int op = 0; op < 3000; ++op) {
    INFO("op " << op);
    const std::size_t s = rng() % scopes.size();
    tokens t(rng() % 20);
    for (token_id& x : t) x = rng() % 5;
    if (rng() % 2 == 0) {
      cache.add(scopes[s], t);
      if (t.empty()) continue;
      if (model.count(s) == 0 && model.size() == max_scopes) {
        model.erase(lru.back());
        lru.pop_back();
      }
      touch(s);
      scope_model& m = model[s];
      m.sequences.push_back(t);
      while (m.bytes() > share) m.sequences.pop_front();
    } else {
      const std::size_t max_len = 1 + rng() % 4;
      // A history whose tokens are all distinct has nothing to find in itself, so the
      // proposal comes from the store: tokens never stored, then one or two stored ones.
      tokens h;
      for (token_id i = rng() % 5; i > 0; --i) h.push_back(100 + i);
      if (t.size() >= 2 && t[t.size() - 2] != t.back()) h.push_back(t[t.size() - 2]);
      if (!t.empty()) h.push_back(t.back());
      const tokens expected =
          model.count(s) != 0 ? brute_force(model[s].sequences, h, 1, 3, max_len) : tokens{};
      CHECK(cache.propose(scopes[s], h, max_len) == expected);
      if (model.count(s) != 0) touch(s);
    }
    cache.check_invariants();
    REQUIRE(cache.num_scopes() == model.size());
    for (const auto& [i, m] : model) REQUIRE(cache.find(scopes[i])->size_bytes() == m.bytes());
    REQUIRE(cache.size_bytes() <= cache.config().capacity_bytes);
  }
}

}  // namespace courier_test_cache_shared_lookup_cache
