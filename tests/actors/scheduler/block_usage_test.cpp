// The KV usage gauge (actors/scheduler/block_usage.hpp), as vLLM defines kv_cache_usage: blocks
// held by requests over all blocks, a block shared by several requests (a common prefix)
// counted once, blocks only the prefix cache holds not counted.
#include "actors/scheduler/block_usage.hpp"

#include <catch2/catch.hpp>

#include "cache/block_pool.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_block_usage {

using namespace courier;

TEST_CASE("block usage: shared blocks count once, each walk starts afresh", "[scheduler]") {
  cache::block_pool pool(10);
  cache::block_refs a = *cache::block_refs::allocate(pool, 3);
  cache::block_refs b = cache::block_refs::share(pool, {a.ids()[0], a.ids()[1]});  // a prefix
  b.append(*cache::block_refs::allocate(pool, 1));
  actors::block_usage usage;
  usage.begin(10);
  usage.add(a);
  usage.add(b);
  CHECK(usage.fraction() == Approx(0.4));  // 3 + 1 distinct of 10
  usage.begin(10);                         // a new walk: nothing counted yet, a counted again
  CHECK(usage.fraction() == 0.0);
  usage.add(a);
  CHECK(usage.fraction() == Approx(0.3));
  usage.begin(0);
  CHECK(usage.fraction() == 0.0);
}

}  // namespace courier_test_actors_scheduler_block_usage
