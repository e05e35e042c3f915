// The engine's half of planning ahead: a following row is fed, on the device, the token sampled
// for its sequence in the step launched last (its sampled position there); rows that cannot be
// fed are taken out and put back empty in plan order.
#include "actors/engine/followed_tokens.hpp"

#include <catch2/catch.hpp>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_engine_followed_tokens {

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

msg::row_result sampled(msg::request_id seq, std::vector<msg::token_id> tokens) {
  msg::row_result r;
  r.seq = seq;
  r.tokens = std::move(tokens);
  return r;
}

}  // namespace

TEST_CASE("followed tokens: a following row is fed its sequence's sampled position",
          "[engine]") {
  actors::followed_tokens f;
  msg::step_plan launched;
  // Sampled positions: 1 -> 0, 2 -> 1..3 (drafts: not followable), 5 -> 4; 3 is a prefill
  // chunk that samples nothing.
  launched.rows = {row(1, false), row(2, false, 0, 2), row(3, false, 0, 0, false), row(5, false)};
  f.launched(launched);
  msg::step_plan p;
  p.rows = {row(4, false, 44), row(1, true), row(5, true), row(3, true), row(2, true)};
  std::vector<std::int32_t> feeds;
  const auto removed = f.resolve(p, feeds);
  REQUIRE(p.rows.size() == 3);
  REQUIRE(feeds == std::vector<std::int32_t>{-1, 0, 4});
  CHECK(p.rows[0].tokens[0] == 44);  // a row that does not follow is left alone
  CHECK(p.rows[1].seq == 1);
  CHECK(p.rows[2].seq == 5);
  REQUIRE(removed.size() == 2);  // 3 sampled nothing, 2 verified drafts: nothing to feed
  CHECK(removed[0].index == 3);
  CHECK(removed[0].seq == 3);
  CHECK(removed[1].index == 4);
  CHECK(removed[1].seq == 2);
}

TEST_CASE("followed tokens: only the step launched last counts, and a failed launch leaves "
          "nothing",
          "[engine]") {
  actors::followed_tokens f;
  msg::step_plan a;
  a.rows = {row(1, false), row(2, false)};
  f.launched(a);
  msg::step_plan b;
  b.rows = {row(2, true)};
  f.launched(b);
  msg::step_plan p;
  p.rows = {row(1, true), row(2, true)};
  std::vector<std::int32_t> feeds;
  auto removed = f.resolve(p, feeds);
  REQUIRE(p.rows.size() == 1);
  CHECK(p.rows[0].seq == 2);
  CHECK(feeds == std::vector<std::int32_t>{0});
  REQUIRE(removed.size() == 1);
  CHECK(removed[0].seq == 1);

  f.forget();  // the launch failed
  msg::step_plan q;
  q.rows = {row(2, true)};
  CHECK(f.resolve(q, feeds).size() == 1);
  CHECK(q.rows.empty());
  CHECK(feeds.empty());
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

}  // namespace courier_test_actors_engine_followed_tokens
