// A hybrid's plan rows in the engine (to_forward_batch): each row runs in its sequence's state
// slot (its start's); a sequence's first row since its start starts at position 0 unless the
// start restores a snapshot, and the restore and snapshot rows reach the model as the
// scheduler planned them.
#include <catch2/catch.hpp>

#include "actors/engine/engine_actor.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_engine_state_rows {

using namespace courier;

namespace {

// Sequence 1 in state slot `slot`: a row from `start`, restoring `restore` first when the
// plan carries its start (`first`), then taking a snapshot into `snapshot`.
model::forward_batch batch_of(std::int32_t start, std::int32_t restore, std::int32_t snapshot,
                              bool first, std::int32_t slot = 2) {
  msg::sequence_start st;
  st.seq = 1;
  st.state_slot = slot;
  st.state_restore = restore;
  st.carries_sampling = true;
  msg::plan_row r;
  r.seq = 1;
  r.tokens = {5, 6, 7};
  r.start_pos = first ? start : 0;
  r.new_blocks = {0, 1, 2};
  r.state_snapshot = snapshot;
  actors::sequence_table seqs(4);
  if (!first) {  // a row before: the one checked is a later row of a running sequence
    const msg::step_plan before{1, {r}, {st}};
    REQUIRE_FALSE(seqs.apply(before));
    seqs.launched(before, seqs.resolve(before));
    r.start_pos = start;
    r.keep_blocks = 3;
    r.new_blocks.clear();
  }
  const msg::step_plan p{2, {r}, first ? std::vector<msg::sequence_start>{st}
                                       : std::vector<msg::sequence_start>{}};
  REQUIRE_FALSE(seqs.apply(p));
  const std::vector<actors::row_use> uses = seqs.resolve(p);
  REQUIRE(uses[0].first == first);
  return actors::to_forward_batch(p, seqs, uses, true);
}

}  // namespace

TEST_CASE("engine state rows: a resumed sequence restores its snapshot; a fresh one without "
          "one must start at 0",
          "[engine]") {
  const model::forward_batch fb = batch_of(32, 9, 11, true);
  REQUIRE(fb.rows.size() == 1);
  CHECK(fb.rows[0].state_slot == 2);
  CHECK(fb.rows[0].state_restore == 9);
  CHECK(fb.rows[0].state_snapshot == 11);
  CHECK(fb.rows[0].start_pos == 32);

  CHECK_THROWS_WITH(batch_of(32, -1, -1, true), Catch::Contains("without restoring a snapshot"));
  // A later row of a running sequence: its start's restore was for its first row only.
  const model::forward_batch later = batch_of(32, 9, -1, false);
  REQUIRE(later.rows.size() == 1);
  CHECK(later.rows[0].state_restore == -1);
  CHECK(later.rows[0].state_slot == 2);
  CHECK_NOTHROW(batch_of(0, -1, 4, true));
  CHECK_THROWS_WITH(batch_of(0, -1, -1, true, -1), Catch::Contains("has no state slot"));
}

}  // namespace courier_test_actors_engine_state_rows
