// The engine's half of planning ahead: following rows get the token sampled for their sequence
// in the step run last, rows that cannot are taken out and put back empty in plan order.
#include "actors/engine/followed_tokens.hpp"

#include <catch2/catch.hpp>

using namespace courier;

namespace {

msg::plan_row row(msg::request_id seq, bool follows, msg::token_id token = 0) {
  msg::plan_row r;
  r.seq = seq;
  r.tokens = {token};
  r.follows = follows;
  r.sample = true;
  return r;
}

msg::row_result sampled(msg::request_id seq, std::vector<msg::token_id> tokens) {
  msg::row_result r;
  r.seq = seq;
  r.tokens = std::move(tokens);
  return r;
}

}  // namespace

TEST_CASE("followed tokens: a following row is fed its sequence's last sample", "[engine]") {
  actors::followed_tokens f;
  msg::step_result prev;
  prev.rows = {sampled(1, {5}), sampled(2, {7, 8, 9}), sampled(3, {})};  // 2: accepted drafts
  f.record(prev);
  msg::step_plan p;
  p.rows = {row(4, false, 44), row(1, true), row(2, true), row(3, true)};
  const auto removed = f.resolve(p);
  REQUIRE(p.rows.size() == 3);
  CHECK(p.rows[0].tokens[0] == 44);  // a row that does not follow is left alone
  CHECK(p.rows[1].tokens[0] == 5);
  CHECK(p.rows[2].tokens[0] == 9);  // the last token the row gave
  REQUIRE(removed.size() == 1);     // 3 sampled nothing: nothing to feed
  CHECK(removed[0].index == 3);
  CHECK(removed[0].seq == 3);
}

TEST_CASE("followed tokens: only the step run last counts, and a failed step leaves nothing",
          "[engine]") {
  actors::followed_tokens f;
  msg::step_result a;
  a.rows = {sampled(1, {5}), sampled(2, {6})};
  f.record(a);
  msg::step_result b;
  b.rows = {sampled(2, {16})};
  f.record(b);
  msg::step_plan p;
  p.rows = {row(1, true), row(2, true)};
  auto removed = f.resolve(p);
  REQUIRE(p.rows.size() == 1);
  CHECK(p.rows[0].tokens[0] == 16);
  REQUIRE(removed.size() == 1);
  CHECK(removed[0].seq == 1);

  msg::step_result failed;
  failed.error = msg::error_code::engine_failure;
  f.record(failed);
  msg::step_plan q;
  q.rows = {row(2, true)};
  CHECK(f.resolve(q).size() == 1);
  CHECK(q.rows.empty());
}

TEST_CASE("followed tokens: removed rows come back empty where they were", "[engine]") {
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
