// A hybrid's plan rows in the engine (to_forward_batch): each row runs in its sequence's state
// slot; a sequence new to the engine starts at position 0 unless its row restores a snapshot,
// and the restore and snapshot rows reach the model as the scheduler planned them.
#include <catch2/catch.hpp>

#include "actors/engine/engine_actor.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_engine_state_rows {

using namespace courier;

namespace {

msg::plan_row hybrid_row(std::int32_t start, std::int32_t restore, std::int32_t snapshot) {
  msg::plan_row r;
  r.seq = 1;
  r.tokens = {5, 6, 7};
  r.start_pos = start;
  r.new_blocks = {0, 1, 2};
  r.state_slot = 2;
  r.state_restore = restore;
  r.state_snapshot = snapshot;
  return r;
}

model::forward_batch batch_of(const msg::plan_row& row, bool first) {
  const msg::step_plan p{1, {row}};
  actors::block_tables tables;
  tables.apply(row);
  actors::slot_use use;
  use.first = first;
  return actors::to_forward_batch(p, tables, {use}, nullptr, true);
}

}  // namespace

TEST_CASE("engine state rows: a resumed sequence restores its snapshot; a fresh one without "
          "one must start at 0",
          "[engine]") {
  const model::forward_batch fb = batch_of(hybrid_row(32, 9, 11), true);
  REQUIRE(fb.rows.size() == 1);
  CHECK(fb.rows[0].state_slot == 2);
  CHECK(fb.rows[0].state_restore == 9);
  CHECK(fb.rows[0].state_snapshot == 11);
  CHECK(fb.rows[0].start_pos == 32);

  CHECK_THROWS_WITH(batch_of(hybrid_row(32, -1, -1), true),
                    Catch::Contains("without restoring a snapshot"));
  CHECK_NOTHROW(batch_of(hybrid_row(32, -1, -1), false));  // a later row of a running sequence
  CHECK_NOTHROW(batch_of(hybrid_row(0, -1, 4), true));
  msg::plan_row no_slot = hybrid_row(0, -1, -1);
  no_slot.state_slot = -1;
  CHECK_THROWS_WITH(batch_of(no_slot, true), Catch::Contains("has no state slot"));
}

}  // namespace courier_test_actors_engine_state_rows
