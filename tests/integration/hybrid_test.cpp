// A hybrid model (tiny-hybrid, NemotronH: Mamba-2, attention and MLP layers) through the
// scheduler and the engine on the sim backend: concurrent requests give exactly what each gives
// alone (generate_one), under overlap, chunked prefill and preemption (recomputed from position
// 0, the state with it) and prefix reuse through state snapshots (hybrid_snapshot_test.cpp has
// each kind of hit) and prompt lookup (prompt_lookup_test.cpp has a hybrid's drafts).
#include <catch2/catch.hpp>

#include <random>

#include "tests/support/alone_outputs.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_hybrid {

using namespace courier;

namespace {

const char* const model_name = "tiny-hybrid";

// Greedy and seeded sampling alternate; every fourth request repeats the first one's prompt (a
// prefix hit when the first one's snapshot is kept by then).
std::vector<msg::submit> hybrid_requests(int n, unsigned seed, int max_prompt, int max_out) {
  std::mt19937 rng(seed);
  std::vector<msg::submit> out;
  for (int i = 0; i < n; ++i) {
    msg::submit s;
    s.id = static_cast<msg::request_id>(i + 1);
    if (i % 4 == 3) {
      s.prompt = out[0].prompt;
    } else {
      const int len = 1 + static_cast<int>(rng() % static_cast<unsigned>(max_prompt));
      for (int t = 0; t < len; ++t) s.prompt.push_back(rng() % 2048);
    }
    s.max_tokens = max_out / 2 + static_cast<int>(rng() % static_cast<unsigned>(max_out / 2));
    s.ignore_eos = true;
    s.sampling.has_seed = true;
    s.sampling.seed = rng();
    s.sampling.temperature = i % 2 == 0 ? 0.0f : 0.8f;
    out.push_back(s);
  }
  return out;
}

using expected_outputs = test::alone_outputs;

}  // namespace

TEST_CASE("hybrid: concurrent requests give what each gives alone, with overlap and without",
          "[integration][scheduler]") {
  static const expected_outputs want =
      test::outputs_alone(model_name, hybrid_requests(24, 5, 80, 24));
  auto cfg = test::hybrid_config(model_name);
  REQUIRE(cfg.scheduler.overlap);
  REQUIRE(cfg.scheduler.prefix_caching);
  cfg.speculative.prompt_lookup.enabled = true;
  const msg::scheduler_stats st = test::run_and_compare_alone(cfg, want);
  CHECK(st.follow_rows > 0);
  cfg.scheduler.overlap = false;
  cfg.scheduler.max_batched_tokens = 7;  // and chunked prefill
  test::run_and_compare_alone(cfg, want);
}

TEST_CASE("hybrid: with 3 state slots for 24 requests, each still gives what it gives alone",
          "[integration][scheduler]") {
  static const expected_outputs want =
      test::outputs_alone(model_name, hybrid_requests(24, 7, 40, 20));
  auto cfg = test::hybrid_config(model_name);
  cfg.scheduler.state_slots = 3;
  // (That at most 3 run at once is the scheduler core test's; here, that the slots the
  // sequences hold in turn give every one its own state.)
  test::run_and_compare_alone(cfg, want);
}

TEST_CASE("hybrid: preemption recomputes a sequence from position 0, its state with it",
          "[integration][scheduler]") {
  static const expected_outputs want =
      test::outputs_alone(model_name, hybrid_requests(16, 6, 30, 100));
  auto cfg = test::hybrid_config(model_name);
  cfg.scheduler.num_kv_blocks = 10;  // 160 tokens: what the longest request needs alone
  const msg::scheduler_stats st = test::run_and_compare_alone(cfg, want);
  INFO("preemptions: " << st.num_preemptions);
  CHECK(st.num_preemptions >= 3);
}

// Swap preemption: a preempted hybrid's KV blocks go to the KV host tier and its Mamba-2 state
// to a host state row, and both come back into its new blocks and state slot: every output
// still equals its run alone (without the state copied back, or into the wrong slot, the
// tokens after resuming differ; the scheduler core test checks every row's state).
TEST_CASE("hybrid: preempted sequences swap their KV and their state to host memory, outputs "
          "unchanged",
          "[integration][scheduler]") {
  static const expected_outputs want =
      test::outputs_alone(model_name, hybrid_requests(16, 6, 30, 100));
  auto cfg = test::hybrid_config(model_name);
  cfg.scheduler.num_kv_blocks = 10;
  cfg.cache.host_tier_mb = 16;
  cfg.cache.ssm_host_tier_mb = 1;  // 25 host state rows of tiny-hybrid's 0.04 MB
  cfg.cache.preemption = "swap";
  for (const bool overlap : {false, true}) {  // with it, victims with a row in flight drain first
    cfg.scheduler.overlap = overlap;
    const msg::scheduler_stats st = test::run_and_compare_alone(cfg, want);
    INFO("overlap " << overlap << ": preemptions " << st.num_preemptions << ", swaps "
                    << st.swap_outs << ", drains " << st.swap_drains);
    CHECK(st.swap_outs >= 3);
    CHECK(st.recompute_preemptions == 0);
    CHECK((st.swap_drains > 0) == overlap);
    CHECK(st.swapped_in_blocks == st.swapped_out_blocks);
  }
}

}  // namespace courier_test_integration_hybrid
