#include "cache/no_prefix_cache.hpp"

#include <catch2/catch.hpp>

#include <utility>
#include <vector>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_cache_no_prefix_cache {

using namespace courier::cache;

TEST_CASE("no prefix cache: matches nothing, stores nothing and holds no reference", "[cache]") {
  block_pool pool(4);
  no_prefix_cache cache(2);
  CHECK_FALSE(cache.is_active());  // so the scheduler makes none of the calls below
  const std::vector<token_id> tokens = {1, 2, 3, 4};
  auto table = block_refs::allocate(pool, 2);
  REQUIRE(table);
  const insert_result r = cache.insert(cache_namespace{}, tokens, *table, 0);
  CHECK(r.stored.empty());
  CHECK(r.followed.empty());
  CHECK(pool.ref_count(block_id{0}) == 1);
  // A caller that counts its inserted blocks as matched gets the same: nothing.
  const insert_result again = cache.insert(cache_namespace{}, tokens, *table, 4);
  CHECK(again.stored.empty());
  CHECK(table->ids() == std::vector<block_id>{block_id{0}, block_id{1}});
  cache.release(std::move(*table));
  CHECK(pool.num_free() == 4);
  prefix_match m = cache.lookup(cache_namespace{}, tokens);
  CHECK(m.num_tokens() == 0);
  CHECK(cache.peek_matched_tokens(cache_namespace{}, tokens) == 0);
  CHECK(cache.evict(4).empty());
  CHECK(cache.stats().num_misses == 1);
  CHECK(cache.stats().num_query_tokens == 4);
  cache.release_matched(std::move(m));  // not taken: uncounted
  CHECK(cache.stats().num_misses == 0);
  cache.check_invariants();
}

}  // namespace courier_test_cache_no_prefix_cache
