#include "cache/block_pool.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_cache_block_pool {

using courier::cache::block_id;
using courier::cache::block_pool;

namespace {

std::vector<block_id> ids(std::initializer_list<std::int32_t> values) {
  std::vector<block_id> out;
  for (std::int32_t v : values) out.push_back(block_id{v});
  return out;
}

}  // namespace

TEST_CASE("block pool: a fresh pool has every block free", "[cache]") {
  block_pool pool(5);
  CHECK(pool.num_total() == 5);
  CHECK(pool.num_free() == 5);
  CHECK(pool.num_used() == 0);
  for (std::int32_t i = 0; i < 5; ++i) CHECK(pool.is_free(block_id{i}));
  pool.check_invariants();
}

TEST_CASE("block pool: allocate hands out the lowest free ids, each with one reference",
          "[cache]") {
  block_pool pool(5);
  const auto first = pool.allocate(2);
  REQUIRE(first);
  CHECK(*first == ids({0, 1}));
  const auto second = pool.allocate(2);
  REQUIRE(second);
  CHECK(*second == ids({2, 3}));
  for (std::int32_t i = 0; i < 4; ++i) CHECK(pool.ref_count(block_id{i}) == 1);
  CHECK(pool.num_free() == 1);
  CHECK(pool.num_used() == 4);
  pool.check_invariants();
}

TEST_CASE("block pool: allocate returns nothing when the blocks do not fit, and takes nothing",
          "[cache]") {
  block_pool pool(4);
  REQUIRE(pool.allocate(3));
  CHECK_FALSE(pool.allocate(2));
  CHECK(pool.num_free() == 1);
  CHECK(pool.is_free(block_id{3}));
  pool.check_invariants();
  const auto last = pool.allocate(1);
  REQUIRE(last);
  CHECK(*last == ids({3}));
}

TEST_CASE("block pool: allocating zero blocks always fits and takes nothing", "[cache]") {
  block_pool pool(0);
  const auto none = pool.allocate(0);
  REQUIRE(none);
  CHECK(none->empty());
  CHECK(pool.num_free() == 0);
}

TEST_CASE("block pool: a block is free again once its last reference is dropped", "[cache]") {
  block_pool pool(3);
  const auto blocks = pool.allocate(1);
  REQUIRE(blocks);
  const block_id b = blocks->front();
  pool.inc_ref(b);
  pool.inc_ref(b);
  CHECK(pool.ref_count(b) == 3);
  pool.dec_ref(b);
  pool.dec_ref(b);
  CHECK_FALSE(pool.is_free(b));
  CHECK(pool.num_free() == 2);
  pool.dec_ref(b);
  CHECK(pool.is_free(b));
  CHECK(pool.num_free() == 3);
  pool.check_invariants();
  // The block freed last is the next one handed out.
  const auto again = pool.allocate(1);
  REQUIRE(again);
  CHECK(again->front() == b);
}

TEST_CASE("block pool: a reference on a free block is a logic error", "[cache]") {
  block_pool pool(2);
  CHECK_THROWS_AS(pool.inc_ref(block_id{1}), std::logic_error);
  CHECK(pool.is_free(block_id{1}));
  pool.check_invariants();
}

TEST_CASE("block pool: dropping a reference nobody holds is a logic error (double free)",
          "[cache]") {
  block_pool pool(2);
  const auto blocks = pool.allocate(1);
  REQUIRE(blocks);
  pool.dec_ref(blocks->front());
  CHECK_THROWS_AS(pool.dec_ref(blocks->front()), std::logic_error);
  CHECK(pool.num_free() == 2);
  pool.check_invariants();
}

TEST_CASE("block pool: an unknown block id is a logic error", "[cache]") {
  block_pool pool(2);
  CHECK_THROWS_AS(pool.inc_ref(block_id{2}), std::logic_error);
  CHECK_THROWS_AS(pool.dec_ref(block_id{-1}), std::logic_error);
  CHECK_THROWS_AS(pool.ref_count(block_id{7}), std::logic_error);
}

}  // namespace courier_test_cache_block_pool
