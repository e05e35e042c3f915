#include "actors/runtime/worker_priority.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>
#include <sched.h>

#include <thread>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_runtime_worker_priority {

using namespace courier;

namespace {

using nice_atom = caf::atom_constant<caf::atom("nice")>;

// Reports the nice value of the thread it runs on, plus `offset` (0 here). The argument is
// there for CAF 0.17: a function actor spawned without arguments dereferences a null argument
// tuple, which UBSan reports.
caf::behavior report_nice(caf::event_based_actor*, int offset) {
  return {[offset](nice_atom) { return actors::current_thread_nice() + offset; }};
}

int nice_of(caf::actor_system& sys, const caf::actor& a) {
  caf::scoped_actor self{sys};
  int n = -100;
  self->request(a, caf::infinite, nice_atom::value)
      .receive([&](int x) { n = x; }, [](caf::error&) {});
  return n;
}

}  // namespace

TEST_CASE("worker priority: pooled CAF workers run nicer, detached actors keep the priority",
          "[runtime]") {
  const int base = actors::current_thread_nice();
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 2);
  cfg.add_thread_hook<actors::worker_priority_hook>(5);
  caf::actor_system sys{cfg};
  auto pooled = sys.spawn(report_nice, 0);
  auto detached = sys.spawn<caf::detached>(report_nice, 0);
  CHECK(nice_of(sys, pooled) == std::min(base + 5, 19));
  CHECK(nice_of(sys, detached) == base);
  caf::anon_send_exit(pooled, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(detached, caf::exit_reason::user_shutdown);
}

TEST_CASE("worker priority: a thread moved to SCHED_IDLE stays there, others keep theirs",
          "[runtime]") {
  bool moved = false;
  int idle_policy = -1;
  std::thread t([&] {  // Catch's assertions belong to the test's thread
    moved = actors::run_current_thread_when_idle();
    idle_policy = sched_getscheduler(0);
  });
  t.join();
  const int other_policy = sched_getscheduler(0);
  CHECK(moved);
  CHECK(idle_policy == SCHED_IDLE);
  CHECK(other_policy != SCHED_IDLE);
}

}  // namespace courier_test_actors_runtime_worker_priority
