// The snapshot policy's choices on hand-made entries: pinned ones are never evicted, recency and
// FLOPs per byte order the rest, a kind never resumed from goes first once that is learned,
// a kind seldom resumed from is seldom taken, and a spill is chosen only when recomputing the
// prefix costs more than the copy back.
#include <catch2/catch.hpp>

#include "actors/scheduler/snapshot_policy.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_snapshot_policy {

using namespace courier;
using cache::snapshot_entry;
using cache::snapshot_kind;

namespace {

snapshot_entry entry(std::int32_t depth, std::uint64_t last_used, snapshot_kind kind,
                     std::int32_t slot, std::int32_t pins = 0) {
  snapshot_entry e;
  e.block = cache::block_id{slot};
  e.depth = depth;
  e.slot = slot;
  e.kind = kind;
  e.last_used = last_used;
  e.pins = pins;
  return e;
}

actors::snapshot_policy policy(double alpha) {
  actors::snapshot_policy p;
  p.alpha = alpha;
  p.costs = {1e9, 1e5, 1e8, 1e4, 1e14, 1e10};
  return p;
}

}  // namespace

TEST_CASE("snapshot policy: LRU without weight, deeper kept with it, pinned never chosen",
          "[scheduler]") {
  const snapshot_entry old_deep = entry(4096, 1, snapshot_kind::exact, 0);
  const snapshot_entry new_short = entry(16, 5, snapshot_kind::exact, 1);
  const snapshot_entry mid = entry(512, 3, snapshot_kind::exact, 2);
  const std::vector<const snapshot_entry*> all = {&old_deep, &new_short, &mid};
  CHECK(policy(0).victim(all) == &old_deep);   // plain LRU
  CHECK(policy(4).victim(all) == &new_short);  // FLOPs per byte dominate: the short one goes
  const snapshot_entry pinned = entry(16, 0, snapshot_kind::exact, 3, 1);
  CHECK(policy(0).victim({&pinned}) == nullptr);
  CHECK(policy(0).victim({&pinned, &mid}) == &mid);
}

TEST_CASE("snapshot policy: a kind never resumed from goes first and is seldom taken, until it "
          "is resumed from again",
          "[scheduler]") {
  actors::snapshot_policy p = policy(1);
  for (int i = 0; i < 100; ++i) {
    p.kept(snapshot_kind::exact);
    p.kept(snapshot_kind::tail);
    if (i % 2 == 0) p.reused(snapshot_kind::tail);
  }
  CHECK(p.reuse(snapshot_kind::exact) < 0.02);
  CHECK(p.reuse(snapshot_kind::tail) > 0.45);
  // Same depth and age: the exact one goes first, whatever the order or rows.
  const snapshot_entry exact = entry(256, 10, snapshot_kind::exact, 1);
  const snapshot_entry tail = entry(256, 10, snapshot_kind::tail, 0);
  CHECK(p.victim({&exact, &tail}) == &exact);
  CHECK(p.victim({&tail, &exact}) == &exact);
  // Without learning (Marconi as published) the tie goes to the lower row.
  actors::snapshot_policy plain = policy(1);
  plain.learn_reuse = false;
  CHECK(plain.victim({&exact, &tail}) == &tail);
  snapshot_entry resumed = exact;  // an exact one that was resumed from counts as useful
  resumed.hits = 1;
  CHECK(p.value(resumed) > p.value(tail));

  int taken = 0;
  for (int i = 0; i < 160; ++i) taken += p.worth_taking(snapshot_kind::exact);
  CHECK(taken == 10);  // one in 16
  CHECK(p.worth_taking(snapshot_kind::tail));
  CHECK(p.worth_taking(snapshot_kind::branch));  // nothing learned yet
  for (int i = 0; i < 10; ++i) p.reused(snapshot_kind::exact);
  CHECK(p.worth_taking(snapshot_kind::exact));
}

TEST_CASE("snapshot policy: spill only when recomputing the prefix costs more than the copy",
          "[scheduler]") {
  actors::snapshot_policy p = policy(1);
  // Copy back: 1e8 bytes at 1e10 B/s = 10 ms; recompute: 1e9 FLOPs a token at 1e14 FLOP/s
  // (plus the attention term) = 10 us a token: worth it from about 1,000 tokens.
  CHECK_FALSE(p.worth_spilling(entry(512, 0, snapshot_kind::exact, 0)));
  CHECK(p.worth_spilling(entry(2048, 0, snapshot_kind::exact, 0)));
  p.costs.host_bytes_per_s = 0;  // no host tier rate known: never
  CHECK_FALSE(p.worth_spilling(entry(1 << 20, 0, snapshot_kind::exact, 0)));
}

}  // namespace courier_test_actors_scheduler_snapshot_policy
