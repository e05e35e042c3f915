// Swap preemption for a hybrid in the scheduler core: a preempted sequence's KV blocks go to the
// host tier and its recurrent state to a host state row, and both come back when it is admitted
// again. Against the model of the device's state rows (state_device_model.hpp), every row must
// find the state of exactly its prefix: a state copied out before its last row ran, copied back
// into the wrong slot, or overwritten before its copy ran fails here, as does a host state row
// lost or held twice (check_invariants). (The KV side: swap_core_test.cpp; real outputs:
// tests/integration/hybrid_test.cpp.)
#include <catch2/catch.hpp>

#include <deque>
#include <map>
#include <random>

#include "tests/support/scheduler_core_driver.hpp"
#include "tests/support/state_device_model.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_hybrid_swap_core {

using namespace courier;
using actors::outgoing_event;
using actors::scheduler_options;
using mode = scheduler_options::preemption_mode;

namespace {

struct swap_run {
  msg::scheduler_stats stats;
  int copied_back = 0;
};

// 16 requests on 16 blocks of 16 tokens (preempting all the time), 4 state slots, 2 snapshot
// rows and `host_rows` host state rows, 64 host KV blocks.
swap_run run(mode m, bool overlap, std::int32_t host_rows, unsigned seed) {
  scheduler_options o;
  o.overlap = overlap;
  o.max_batched_tokens = 40;
  o.ssm_checkpoint_tokens = 32;
  o.preemption = m;
  msg::engine_ready ready = test::fake_hybrid_ready(16, 4, 2, host_rows);
  ready.host_kv_blocks = 64;
  ready.kv_block_bytes = 1 << 16;
  actors::scheduler_core core(o, ready);
  test::core_events ev;
  test::state_device dev;
  std::mt19937 rng(seed);
  std::map<msg::request_id, int> want_out;
  std::vector<outgoing_event> out;
  for (msg::request_id id = 1; id <= 16; ++id) {
    msg::submit s;
    s.id = id;
    const int len = 10 + static_cast<int>(rng() % 60);
    for (int t = 0; t < len; ++t) s.prompt.push_back(rng() % 500);
    s.max_tokens = 10 + static_cast<int>(rng() % 80);
    s.ignore_eos = true;
    dev.prompts[id] = s.prompt;
    want_out[id] = s.max_tokens;
    core.submit(s, out);
    ev.take(out);
  }
  std::deque<msg::step_plan> flights;
  for (;;) {
    while (auto p = core.plan(out)) {
      ev.take(out);
      core.check_invariants();
      dev.run(*p);
      flights.push_back(std::move(*p));
      const std::uint64_t batch = flights.back().copy_batch;  // copies done at once
      if (batch != 0) core.on_copies_done({batch, true, {}});
      core.check_invariants();
    }
    if (flights.empty()) break;
    core.on_result(test::fake_engine(flights.front()), out);
    flights.pop_front();
    ev.take(out);
    core.check_invariants();
  }
  for (const auto& [id, n] : want_out) {
    INFO("request " << id);
    CHECK(ev.last[id].finish == msg::finish_reason::length);
    CHECK(ev.tokens[id] ==
          test::expected_tokens(id, static_cast<int>(dev.prompts.at(id).size()), n));
  }
  swap_run r;
  r.stats = core.stats();
  r.copied_back = dev.copied_back;
  core.evict_all_cached();
  CHECK(core.stats().num_free_blocks == 16);
  return r;
}

}  // namespace

TEST_CASE("hybrid swap core: preempted hybrids swap their KV and their state out and back, and "
          "every row finds the state of exactly its prefix",
          "[scheduler]") {
  for (const bool overlap : {false, true}) {
    INFO("overlap " << overlap);
    const swap_run r = run(mode::swap, overlap, 6, 3);
    INFO("preemptions " << r.stats.num_preemptions << ", swaps " << r.stats.swap_outs);
    CHECK(r.stats.num_preemptions > 0);
    CHECK(r.stats.swap_outs >= 3);
    // Every victim swaps: with overlap, one with a row in flight first drains (no row for a
    // step) and swaps at the next plan, with nothing in flight.
    CHECK(r.stats.recompute_preemptions == 0);
    CHECK((r.stats.swap_drains > 0) == overlap);
    CHECK(r.stats.swapped_in_blocks == r.stats.swapped_out_blocks);
    // Every swap comes back through a state copy, each first row after one continuing from it.
    CHECK(r.copied_back == static_cast<int>(r.stats.swap_outs));
  }
}

TEST_CASE("hybrid swap core: without host state rows, or in recompute mode, a hybrid recomputes",
          "[scheduler]") {
  const swap_run none = run(mode::swap, false, 0, 3);
  CHECK(none.stats.num_preemptions > 0);
  CHECK(none.stats.swap_outs == 0);
  CHECK(none.copied_back == 0);
  const swap_run recompute = run(mode::recompute, false, 6, 3);
  CHECK(recompute.stats.num_preemptions > 0);
  CHECK(recompute.stats.swap_outs == 0);
}

}  // namespace courier_test_actors_scheduler_hybrid_swap_core
