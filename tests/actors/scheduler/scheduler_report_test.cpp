// The scheduler's report for telemetry: accumulated between takes, nothing when nothing
// happened, and the stats' counters as increments since the take before (so a counter the report
// and /v1 stats both show can never disagree, and nothing is counted twice).
#include "actors/scheduler/scheduler_report.hpp"

#include <catch2/catch.hpp>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_scheduler_report {

using namespace courier;

TEST_CASE("scheduler report: accumulates until taken, then starts again", "[scheduler]") {
  actors::scheduler_report rep;
  msg::scheduler_stats stats;
  CHECK_FALSE(rep.take(stats, 0, 0, 0.0));  // nothing happened

  rep.prefix_lookup(100, 64);
  rep.prefix_lookup(10, 0);
  rep.prompt_admitted(110);
  msg::step_summary step;
  step.step = 7;
  step.num_rows = 3;
  rep.step_answered(step);
  msg::request_summary done;
  done.generation_tokens = 5;
  rep.request_ended(done);
  stats.generated_tokens = 40;
  stats.num_preemptions = 2;
  stats.spec_accepted_own = 9;
  stats.snapshot_hits_branch = 3;
  stats.snapshot_hits_tail = 1;
  stats.snapshot_misses = 6;
  stats.snapshot_recomputed_tokens = 48;
  stats.num_snapshots = 3;
  stats.snapshot_capacity = 12;
  auto r = rep.take(stats, 4, 1, 0.25);
  REQUIRE(r);
  CHECK(r->prefix_queries == 110);
  CHECK(r->prefix_hits == 64);
  CHECK(r->prompt_tokens == 110);
  REQUIRE(r->steps.size() == 1);
  CHECK(r->steps[0].step == 7);
  REQUIRE(r->finished.size() == 1);
  CHECK(r->finished[0].generation_tokens == 5);
  CHECK(r->generated_tokens == 40);
  CHECK(r->num_preemptions == 2);
  CHECK(r->spec_accepted_own == 9);
  CHECK(r->num_running == 4);
  CHECK(r->num_waiting == 1);
  CHECK(r->kv_usage == 0.25);
  CHECK(r->snapshot_hits_exact == 0);
  CHECK(r->snapshot_hits_branch == 3);
  CHECK(r->snapshot_hits_tail == 1);
  CHECK(r->snapshot_misses == 6);
  CHECK(r->snapshot_recomputed_tokens == 48);
  CHECK(r->snapshot_usage == 0.25);

  CHECK_FALSE(rep.take(stats, 4, 1, 0.25));  // taken: nothing new
  rep.changed();  // a gauge moved
  stats.generated_tokens = 52;
  stats.snapshot_hits_tail = 4;
  r = rep.take(stats, 3, 0, 0.5);
  REQUIRE(r);
  CHECK(r->prefix_queries == 0);
  CHECK(r->steps.empty());
  CHECK(r->finished.empty());
  CHECK(r->generated_tokens == 12);  // the increment since the take before
  CHECK(r->snapshot_hits_tail == 3);
  CHECK(r->snapshot_misses == 0);
  CHECK(r->num_preemptions == 0);
  CHECK(r->num_running == 3);
}

}  // namespace courier_test_actors_scheduler_scheduler_report
