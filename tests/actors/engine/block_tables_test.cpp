// The engine's copies of block tables, kept across steps from the plans' differences.
#include "actors/engine/block_tables.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <stdexcept>
#include <vector>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_engine_block_tables {

using courier::actors::block_tables;
using courier::msg::plan_row;
using table = std::vector<std::int32_t>;

plan_row row(courier::msg::request_id seq, std::int32_t keep, table blocks) {
  plan_row r;
  r.seq = seq;
  r.keep_blocks = keep;
  r.new_blocks = std::move(blocks);
  return r;
}

TEST_CASE("block tables: a row's difference keeps a prefix of the copy and appends", "[engine]") {
  block_tables t;
  CHECK(t.apply(row(1, 0, {4, 9})) == table{4, 9});      // first row: the whole table
  CHECK(t.apply(row(1, 2, {})) == table{4, 9});          // most decode steps: nothing new
  CHECK(t.apply(row(1, 2, {11})) == table{4, 9, 11});    // a new block
  CHECK(t.apply(row(1, 1, {3, 5})) == table{4, 3, 5});   // drafts rejected, blocks changed
  CHECK(t.apply(row(2, 0, {7})) == table{7});            // sequences are apart
  CHECK(t.apply(row(1, 0, {8})) == table{8});            // after preemption: replaced
  REQUIRE(t.find(1));
  CHECK(*t.find(1) == table{8});
  CHECK(t.num_sequences() == 2);
}

TEST_CASE("block tables: keeping more than the copy holds is refused and changes nothing",
          "[engine]") {
  block_tables t;
  t.apply(row(1, 0, {4, 9}));
  CHECK_THROWS_AS(t.apply(row(1, 3, {1})), std::invalid_argument);
  CHECK(*t.find(1) == table{4, 9});
  CHECK_THROWS_AS(t.apply(row(5, 1, {})), std::invalid_argument);  // an unknown sequence
  CHECK(t.find(5) == nullptr);
  CHECK_THROWS_AS(t.apply(row(1, -1, {})), std::invalid_argument);
  CHECK(t.num_sequences() == 1);
}

TEST_CASE("block tables: ended sequences are forgotten, unknown ones ignored", "[engine]") {
  block_tables t;
  t.apply(row(1, 0, {1}));
  t.apply(row(2, 0, {2}));
  t.release({1, 42});
  CHECK(t.find(1) == nullptr);
  REQUIRE(t.find(2));
  CHECK(t.num_sequences() == 1);
}

}  // namespace courier_test_actors_engine_block_tables
