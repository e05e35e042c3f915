// The radix tree's cache events: every insert that stores blocks and every evict that frees some
// appears once, with the chain hashes (block_hash.hpp) recomputed here from the tokens alone;
// replaying the events gives exactly the set of blocks the tree stores.
#include "cache/cache_events.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <set>
#include <vector>

#include "cache/block_hash.hpp"
#include "cache/radix_tree.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_cache_cache_events {

using namespace courier::cache;

namespace {

// The chain hashes of every whole block of `tokens` in namespace `ns`, from scratch.
std::vector<std::uint64_t> hashes_of(const cache_namespace& ns, const std::vector<token_id>& tokens,
                                     std::size_t block_size) {
  std::vector<std::uint64_t> out;
  std::uint64_t h = namespace_hash(ns);
  for (std::size_t b = 0; (b + 1) * block_size <= tokens.size(); ++b) {
    h = chain_hash(h, tokens.data() + b * block_size, block_size);
    out.push_back(h);
  }
  return out;
}

}  // namespace

TEST_CASE("cache events: stored blocks carry their chain hashes, parent and tokens; evicted "
          "ones are removed; the events replay to what the tree stores",
          "[cache]") {
  constexpr std::size_t bs = 4;
  block_pool pool(64);
  radix_tree tree(pool, bs);
  cache_event_log log;
  tree.record_events(&log);
  const cache_namespace ns{3, "tenant-a"};
  const std::vector<token_id> a = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};  // 3 blocks + 1
  auto table = block_refs::allocate(pool, 3);
  REQUIRE(table);
  (void)tree.insert(ns, a, *table, 0);
  tree.release(std::move(*table));
  REQUIRE(log.size() == 1);
  CHECK(log[0].what == cache_event::kind::stored);
  CHECK(log[0].hashes == hashes_of(ns, a, bs));
  CHECK_FALSE(log[0].parent.has_value());  // the prompt's first block
  CHECK(log[0].tokens == std::vector<token_id>(a.begin(), a.begin() + 12));
  CHECK(log[0].block_size == bs);
  CHECK(log[0].adapter_id == 3);

  // A prompt sharing a's first 2 blocks stores its third and fourth only, after a's second.
  const std::vector<token_id> b = {1, 2, 3, 4, 5, 6, 7, 8, 20, 21, 22, 23, 24, 25, 26, 27};
  auto match = tree.lookup(ns, b);
  REQUIRE(match.num_tokens() == 8);
  auto tb = block_refs::allocate(pool, 2);
  REQUIRE(tb);
  block_refs whole = match.take_blocks();
  whole.append(std::move(*tb));
  (void)tree.insert(ns, b, whole, 8);
  tree.release(std::move(whole));
  REQUIRE(log.size() == 2);
  const auto hb = hashes_of(ns, b, bs);
  CHECK(log[1].hashes == std::vector<std::uint64_t>(hb.begin() + 2, hb.end()));
  REQUIRE(log[1].parent.has_value());
  CHECK(*log[1].parent == hb[1]);
  CHECK(log[1].tokens == std::vector<token_id>(b.begin() + 8, b.end()));

  // Evicting frees leaves first; the removed event names exactly the blocks freed.
  const std::vector<block_id> freed = tree.evict(3);
  REQUIRE(log.size() == 3);
  CHECK(log[2].what == cache_event::kind::removed);
  CHECK(log[2].hashes.size() == freed.size());

  // Replaying: stored minus removed is what the tree still stores (as many blocks, and each of
  // those hashes is one of a prompt's prefixes the tree still matches).
  std::set<std::uint64_t> live;
  for (const cache_event& e : log) {
    for (std::uint64_t h : e.hashes) {
      if (e.what == cache_event::kind::stored) CHECK(live.insert(h).second);
      if (e.what == cache_event::kind::removed) CHECK(live.erase(h) == 1);
    }
  }
  CHECK(live.size() == tree.stats().num_blocks);
  const std::size_t a_left = tree.peek_matched_tokens(ns, a) / bs;
  const std::size_t b_left = tree.peek_matched_tokens(ns, b) / bs;
  std::set<std::uint64_t> matched;
  const auto ha = hashes_of(ns, a, bs);
  matched.insert(ha.begin(), ha.begin() + static_cast<std::ptrdiff_t>(a_left));
  matched.insert(hb.begin(), hb.begin() + static_cast<std::ptrdiff_t>(b_left));
  CHECK(live == matched);
}

}  // namespace courier_test_cache_cache_events
