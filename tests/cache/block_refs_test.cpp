#include "cache/block_refs.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>
#include <utility>
#include <vector>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_cache_block_refs {

using courier::cache::block_id;
using courier::cache::block_pool;
using courier::cache::block_refs;

TEST_CASE("block refs: destroying the handle drops exactly its references", "[cache]") {
  block_pool pool(4);
  {
    auto refs = block_refs::allocate(pool, 3);
    REQUIRE(refs);
    CHECK(refs->size() == 3);
    CHECK(pool.num_free() == 1);
  }
  CHECK(pool.num_free() == 4);
  pool.check_invariants();
}

TEST_CASE("block refs: allocate returns nothing when the pool is short, and takes nothing",
          "[cache]") {
  block_pool pool(2);
  CHECK_FALSE(block_refs::allocate(pool, 3));
  CHECK(pool.num_free() == 2);
}

TEST_CASE("block refs: moving a handle moves its references, it does not copy them", "[cache]") {
  block_pool pool(3);
  auto refs = block_refs::allocate(pool, 2);
  REQUIRE(refs);
  block_refs moved = std::move(*refs);
  CHECK(moved.size() == 2);
  CHECK(refs->empty());  // NOLINT: the moved-from handle is empty by contract
  refs.reset();
  CHECK(pool.num_free() == 1);
  block_refs assigned;
  assigned = std::move(moved);
  CHECK(pool.num_free() == 1);
  assigned = block_refs();
  CHECK(pool.num_free() == 3);
}

TEST_CASE("block refs: share takes one more reference on each block", "[cache]") {
  block_pool pool(3);
  auto owner = block_refs::allocate(pool, 2);
  REQUIRE(owner);
  {
    block_refs sharer = block_refs::share(pool, owner->ids());
    CHECK(sharer.ids() == owner->ids());
    CHECK(pool.ref_count(block_id{0}) == 2);
    CHECK(pool.ref_count(block_id{1}) == 2);
  }
  CHECK(pool.ref_count(block_id{0}) == 1);
  CHECK(pool.ref_count(block_id{1}) == 1);
}

TEST_CASE("block refs: sharing a free block takes nothing and is a logic error", "[cache]") {
  block_pool pool(3);
  auto owner = block_refs::allocate(pool, 1);
  REQUIRE(owner);
  const std::vector<block_id> ids = {block_id{0}, block_id{2}};
  CHECK_THROWS_AS(block_refs::share(pool, ids), std::logic_error);
  CHECK(pool.ref_count(block_id{0}) == 1);
  pool.check_invariants();
}

TEST_CASE("block refs: replace moves one entry's reference onto another block", "[cache]") {
  block_pool pool(3);
  auto kept = block_refs::allocate(pool, 1);   // block 0, held elsewhere
  auto table = block_refs::allocate(pool, 2);  // blocks 1 and 2
  REQUIRE(kept);
  REQUIRE(table);
  table->replace(0, block_id{0});
  CHECK(table->ids() == std::vector<block_id>{block_id{0}, block_id{2}});
  CHECK(pool.ref_count(block_id{0}) == 2);
  CHECK(pool.is_free(block_id{1}));
  table->replace(1, block_id{2});  // by itself: kept
  CHECK(pool.ref_count(block_id{2}) == 1);
  pool.check_invariants();
}

TEST_CASE("block refs: release drops everything once, and again is a no-op", "[cache]") {
  block_pool pool(2);
  auto refs = block_refs::allocate(pool, 2);
  REQUIRE(refs);
  refs->release();
  CHECK(refs->empty());
  CHECK(pool.num_free() == 2);
  refs->release();
  CHECK(pool.num_free() == 2);
  pool.check_invariants();
}

TEST_CASE("block refs: append takes over the other handle's references", "[cache]") {
  block_pool pool(4);
  auto table = block_refs::allocate(pool, 1);
  auto more = block_refs::allocate(pool, 2);
  REQUIRE(table);
  REQUIRE(more);
  table->append(std::move(*more));
  CHECK(table->ids() == std::vector<block_id>{block_id{0}, block_id{1}, block_id{2}});
  CHECK(more->empty());
  more.reset();
  CHECK(pool.num_free() == 1);
  block_refs empty;
  empty.append(std::move(*table));
  CHECK(empty.size() == 3);
  CHECK(pool.num_free() == 1);
}

TEST_CASE("block refs: append across two pools is a logic error", "[cache]") {
  block_pool a(1);
  block_pool b(1);
  auto from_a = block_refs::allocate(a, 1);
  auto from_b = block_refs::allocate(b, 1);
  REQUIRE(from_a);
  REQUIRE(from_b);
  CHECK_THROWS_AS(from_a->append(std::move(*from_b)), std::logic_error);
  CHECK(from_b->size() == 1);
}

TEST_CASE("block refs: truncate drops the tail's references and keeps the head's", "[cache]") {
  block_pool pool(6);
  auto refs = block_refs::allocate(pool, 5);
  REQUIRE(refs);
  const std::vector<block_id> ids = refs->ids();
  auto shared = block_refs::share(pool, {ids[4]});  // the last block has a second holder
  refs->truncate(2);
  CHECK(refs->ids() == std::vector<block_id>(ids.begin(), ids.begin() + 2));
  CHECK(pool.ref_count(ids[2]) == 0);
  CHECK(pool.ref_count(ids[3]) == 0);
  CHECK(pool.ref_count(ids[4]) == 1);  // still the other holder's
  CHECK(pool.num_free() == 3);
  refs->truncate(7);  // longer than the table: nothing changes
  CHECK(refs->size() == 2);
  pool.check_invariants();
}

TEST_CASE("block refs: the synced prefix tracks every change since the copy was last synced",
          "[cache]") {
  block_pool pool(16);
  auto t = block_refs::allocate(pool, 3);
  REQUIRE(t);
  CHECK(t->synced_prefix() == 0);  // never synced: the copy elsewhere has nothing
  t->mark_synced();
  CHECK(t->synced_prefix() == 3);
  auto more = block_refs::allocate(pool, 2);
  t->append(std::move(*more));  // appending changes no entry the copy has
  CHECK(t->synced_prefix() == 3);
  t->mark_synced();
  t->truncate(4);
  CHECK(t->synced_prefix() == 4);
  t->truncate(2);  // entries 2.. are gone: the copy keeps 2
  CHECK(t->synced_prefix() == 2);
  auto grow = block_refs::allocate(pool, 2);
  t->append(std::move(*grow));  // new entries where the copy had others
  CHECK(t->synced_prefix() == 2);
  t->mark_synced();
  t->replace(1, (*t)[1]);  // the same block: nothing changed
  CHECK(t->synced_prefix() == 4);
  t->replace(3, (*t)[0]);  // entry 3 now differs
  CHECK(t->synced_prefix() == 3);
  t->replace(1, (*t)[0]);
  CHECK(t->synced_prefix() == 1);
  t->mark_synced();
  block_refs moved = std::move(*t);  // a table moved in starts unsynced, as does the one left
  CHECK(moved.synced_prefix() == 0);
  CHECK(t->synced_prefix() == 0);
  moved.mark_synced();
  moved.release();
  CHECK(moved.synced_prefix() == 0);
  pool.check_invariants();
}

}  // namespace courier_test_cache_block_refs
