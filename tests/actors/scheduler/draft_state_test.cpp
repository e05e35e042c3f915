// One sequence's prompt-lookup draft length and pauses (actors/scheduler/draft_state), against
// the policy the scheduler README states.
#include "actors/scheduler/draft_state.hpp"

#include <catch2/catch.hpp>

#include <vector>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_draft_state {

using courier::actors::draft_state;

namespace {

// Decode steps without a search after the last event, counted through want().
int paused_steps(draft_state& d, std::int32_t num_draft) {
  int n = 0;
  while (d.want(num_draft, 100) == 0) ++n;
  return n;
}

}  // namespace

TEST_CASE("draft state: the length starts at num_draft, doubles up to it, falls to accepted + 1",
          "[scheduler]") {
  draft_state d;
  CHECK(d.want(8, 100) == 8);
  CHECK(d.want(8, 5) == 5);  // within the step's limit
  d.verified(8, 8, 3);  // 3 of 8 stood
  CHECK(d.len == 4);
  d.verified(8, 4, 4);  // all stood: doubles
  CHECK(d.len == 8);
  d.verified(8, 8, 8);  // never past num_draft
  CHECK(d.len == 8);
}

TEST_CASE("draft state: consecutive rows that accept nothing pause 0, 1, 3, 7, ... 31 steps",
          "[scheduler]") {
  draft_state d;
  CHECK(d.want(4, 100) == 4);
  std::vector<int> pauses;
  for (int i = 0; i < 7; ++i) {
    d.verified(4, 1, 0);
    CHECK(d.len == 1);
    pauses.push_back(paused_steps(d, 4));
  }
  CHECK(pauses == std::vector<int>{0, 1, 3, 7, 15, 31, 31});
  d.verified(4, 1, 1);  // one stood: the misses end
  CHECK(d.misses == 0);
  CHECK(d.due());
}

TEST_CASE("draft state: searches that find nothing pause 1, 3, then 7 steps; a find resets",
          "[scheduler]") {
  draft_state d;
  std::vector<int> pauses;
  for (int i = 0; i < 4; ++i) {
    d.searched(false);
    CHECK_FALSE(d.due());
    pauses.push_back(paused_steps(d, 4));
  }
  CHECK(pauses == std::vector<int>{1, 3, 7, 7});
  d.searched(true);
  CHECK(d.idle == 0);
  d.searched(false);
  CHECK(paused_steps(d, 4) == 1);
  // A row that follows one in flight counts a paused step without searching.
  d.searched(false);
  d.skip();
  CHECK(paused_steps(d, 4) == 2);
}

}  // namespace courier_test_actors_scheduler_draft_state
