// Each running sequence's slot in the model's device state: a following row reads, on the
// device, its sequence's next token there, which the step launched last wrote after sampling;
// rows that cannot be fed are taken out and put back empty in plan order; the block table kept
// there is written only past the entries known to be on the device; slots are taken at a
// sequence's first row and given back when it ends.
#include "actors/engine/token_slots.hpp"

#include <catch2/catch.hpp>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_engine_token_slots {

using namespace courier;

namespace {

msg::plan_row row(msg::request_id seq, bool follows, msg::token_id token = 0,
                  std::int32_t drafts = 0, bool sample = true) {
  msg::plan_row r;
  r.seq = seq;
  r.tokens = std::vector<msg::token_id>(static_cast<std::size_t>(1 + drafts), token);
  r.num_drafts = drafts;
  r.follows = follows;
  r.sample = sample;
  return r;
}

// Applies every row's table difference, as the engine does before resolving.
actors::block_tables& applied(actors::block_tables& tables, const msg::step_plan& plan) {
  for (const msg::plan_row& r : plan.rows) tables.apply(r);
  return tables;
}

msg::row_result sampled(msg::request_id seq, std::vector<msg::token_id> tokens) {
  msg::row_result r;
  r.seq = seq;
  r.tokens = std::move(tokens);
  return r;
}

}  // namespace

TEST_CASE("token slots: a following row reads the slot its sequence's last sample was written to",
          "[engine]") {
  actors::token_slots s(8);
  actors::block_tables t;
  // 1 and 5 sample one token each; 2 verifies drafts (its next token depends on how many stand:
  // not followable); 3 is a prefill chunk that samples nothing.
  msg::step_plan first;
  first.rows = {row(1, false), row(2, false, 0, 2), row(3, false, 0, 0, false), row(5, false)};
  std::vector<actors::slot_use> uses;
  REQUIRE(s.resolve(first, applied(t, first), uses).empty());
  REQUIRE(uses.size() == 4);
  CHECK(uses[0].read == -1);
  CHECK(uses[0].write == 0);   // slots in order of first rows
  CHECK(uses[1].write == -1);  // drafts: nothing written
  CHECK(uses[1].table == 1);   // but its table is kept
  CHECK(uses[2].write == -1);  // nothing sampled
  CHECK(uses[2].table == 2);
  CHECK(uses[3].write == 3);
  s.launched(first, uses);
  CHECK(s.in_use() == 4);

  msg::step_plan p;
  p.rows = {row(4, false, 44), row(5, true), row(1, true), row(3, true), row(2, true)};
  const auto removed = s.resolve(p, applied(t, p), uses);
  REQUIRE(p.rows.size() == 3);
  REQUIRE(uses.size() == 3);
  CHECK(p.rows[0].tokens[0] == 44);  // a row that does not follow is left alone
  CHECK(uses[0].read == -1);
  CHECK(uses[0].write == 4);  // 4's first row takes a slot
  CHECK(p.rows[1].seq == 5);
  CHECK(uses[1].read == 3);  // its own slot, whatever its place in either plan
  CHECK(uses[1].write == 3);
  CHECK(p.rows[2].seq == 1);
  CHECK(uses[2].read == 0);
  REQUIRE(removed.size() == 2);  // 3 sampled nothing, 2 verified drafts: nothing to feed
  CHECK(removed[0].index == 3);
  CHECK(removed[0].seq == 3);
  CHECK(removed[1].index == 4);
  CHECK(removed[1].seq == 2);
}

TEST_CASE("token slots: only the step launched last counts, and a failed launch leaves nothing",
          "[engine]") {
  actors::token_slots s(8);
  actors::block_tables t;
  std::vector<actors::slot_use> uses;
  msg::step_plan a;
  a.rows = {row(1, false), row(2, false)};
  REQUIRE(s.resolve(a, applied(t, a), uses).empty());
  s.launched(a, uses);
  msg::step_plan b;
  b.rows = {row(2, true)};
  REQUIRE(s.resolve(b, applied(t, b), uses).empty());
  s.launched(b, uses);
  msg::step_plan p;
  p.rows = {row(1, true), row(2, true)};  // 1's slot was written two steps ago: stale
  auto removed = s.resolve(p, applied(t, p), uses);
  REQUIRE(p.rows.size() == 1);
  CHECK(p.rows[0].seq == 2);
  REQUIRE(uses.size() == 1);
  CHECK(uses[0].read == 1);
  REQUIRE(removed.size() == 1);
  CHECK(removed[0].seq == 1);

  s.forget();  // the launch failed
  msg::step_plan q;
  q.rows = {row(2, true)};
  CHECK(s.resolve(q, applied(t, q), uses).size() == 1);
  CHECK(q.rows.empty());
  CHECK(uses.empty());
}

TEST_CASE("token slots: an ended sequence gives its slot back, and a full pool writes none",
          "[engine]") {
  actors::token_slots s(2);
  actors::block_tables t;
  std::vector<actors::slot_use> uses;
  msg::step_plan a;
  a.rows = {row(1, false), row(2, false), row(3, false)};
  REQUIRE(s.resolve(a, applied(t, a), uses).empty());
  CHECK(uses[0].write == 0);
  CHECK(uses[1].write == 1);
  CHECK(uses[2].write == -1);  // no slot left: 3 cannot be followed, nothing else breaks
  s.launched(a, uses);
  msg::step_plan b;
  b.rows = {row(3, true)};
  CHECK(s.resolve(b, applied(t, b), uses).size() == 1);

  s.release({1, 7});  // 7 never had one
  CHECK(s.in_use() == 1);
  msg::step_plan c;
  c.rows = {row(3, false), row(1, true)};  // 1 ended: a following row of it is never fed
  const auto removed = s.resolve(c, applied(t, c), uses);
  REQUIRE(removed.size() == 1);
  CHECK(removed[0].seq == 1);
  REQUIRE(uses.size() == 1);
  CHECK(uses[0].write == 0);  // 1's slot, now 3's
  s.launched(c, uses);
  s.release({2, 3});
  CHECK(s.in_use() == 0);
}

TEST_CASE("token slots: a table is written past the entries a launch that succeeded left there",
          "[engine]") {
  actors::token_slots s(4);
  actors::block_tables t;
  std::vector<actors::slot_use> uses;
  auto step = [&](std::int32_t keep, std::vector<std::int32_t> fresh, bool follows = false) {
    msg::step_plan p;
    p.rows = {row(1, follows)};
    p.rows[0].keep_blocks = keep;
    p.rows[0].new_blocks = std::move(fresh);
    s.resolve(p, applied(t, p), uses);
    return p;
  };
  msg::step_plan p = step(0, {5, 6});
  REQUIRE(uses.size() == 1);
  CHECK(uses[0].table == 0);
  CHECK(uses[0].table_keep == 0);  // a new slot: the whole table is written
  CHECK(uses[0].table_len == 2);
  s.launched(p, uses);
  p = step(2, {7});
  CHECK(uses[0].table_keep == 2);  // only the new block
  CHECK(uses[0].table_len == 3);
  s.launched(p, uses);
  p = step(1, {9, 10});  // the row replaces entries 1 and 2
  CHECK(uses[0].table_keep == 1);
  s.forget();  // ... and its launch fails
  p = step(3, {});
  CHECK(uses[0].table_keep == 1);  // what failed is written again
  s.launched(p, uses);
  p = step(3, {});
  CHECK(uses[0].table_keep == 3);
  s.forget();
  p = step(2, {11}, true);  // a following row with nothing to follow: taken out
  CHECK(uses.empty());
  p = step(3, {});
  CHECK(uses[0].table_keep == 2);  // the removed row's new block was never written
}

TEST_CASE("token slots: removed rows come back empty where they were", "[engine]") {
  msg::step_result r;
  r.rows = {sampled(2, {1}), sampled(4, {2})};  // what ran of a plan 1, 2, 3, 4, 5
  actors::restore_removed_rows(r, {{0, 1}, {2, 3}, {4, 5}});
  REQUIRE(r.rows.size() == 5);
  for (std::size_t i = 0; i < 5; ++i) CHECK(r.rows[i].seq == i + 1);
  CHECK(r.rows[0].tokens.empty());
  CHECK(r.rows[1].tokens == std::vector<msg::token_id>{1});
  CHECK(r.rows[2].tokens.empty());
  CHECK(r.rows[3].tokens == std::vector<msg::token_id>{2});
  CHECK(r.rows[4].tokens.empty());

  msg::step_result failed;
  failed.error = msg::error_code::engine_failure;
  actors::restore_removed_rows(failed, {{0, 1}});
  CHECK(failed.rows.empty());  // a failed step's result has no rows
}

}  // namespace courier_test_actors_engine_token_slots
