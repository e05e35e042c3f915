// What preempting a sequence costs (actors/scheduler/preemption_cost.hpp): swapping moves its
// blocks (and a hybrid's state) out and back over the host link; recomputing runs its uncached
// tokens through the model again, where causal attention gives the query at position i one
// (query, key) pair per key 1..i, so tokens (c, n] cost n(n+1)/2 - c(c+1)/2 pairs.
#include "actors/scheduler/preemption_cost.hpp"

#include <catch2/catch.hpp>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_preemption_cost {

using namespace courier;
using actors::estimate_preemption;

TEST_CASE("preemption cost: causal attention pairs and linear FLOPs of the uncached tokens",
          "[scheduler]") {
  msg::engine_ready r;
  r.device_flops = 1.0;  // seconds count FLOPs
  r.attention_flops_per_pair = 1.0;
  r.linear_flops_per_token = 0.0;
  CHECK(estimate_preemption(r, 3, 0, 1).recompute_s == Approx(6.0));  // 1 + 2 + 3 pairs
  CHECK(estimate_preemption(r, 3, 1, 1).recompute_s == Approx(5.0));  // 2 + 3
  CHECK(estimate_preemption(r, 3, 3, 1).recompute_s == Approx(0.0));  // all cached
  r.attention_flops_per_pair = 0.0;
  r.linear_flops_per_token = 10.0;
  CHECK(estimate_preemption(r, 100, 40, 7).recompute_s == Approx(600.0));  // 60 tokens
}

TEST_CASE("preemption cost: a swap copies every block out and back, a hybrid's state too",
          "[scheduler]") {
  msg::engine_ready r;
  r.kv_block_bytes = 1000.0;
  r.host_bytes_per_s = 1e6;
  CHECK(estimate_preemption(r, 64, 0, 4).swap_s == Approx(2 * 4 * 1000.0 / 1e6));
  r.recurrent = true;
  r.snapshot_bytes = 500.0;
  CHECK(estimate_preemption(r, 64, 0, 4).swap_s == Approx(2 * (4 * 1000.0 + 500.0) / 1e6));
  r.host_bytes_per_s = 0.0;  // unknown: never a division by zero
  CHECK(estimate_preemption(r, 64, 0, 4).swap_s > 0.0);
}

}  // namespace courier_test_actors_scheduler_preemption_cost
