// Swap preemption in the scheduler core, against a model of the device's KV blocks and the host
// tier: each KV slot holds a hash of the tokens up to its position, the plan's block copies move
// blocks as the engine does (first, in order), and every row must find in its table exactly
// the KV of the tokens before it. So a swap that copies the wrong block, comes back before its
// copies out ran, loses a block, or resumes at the wrong position fails here, as does a host
// block held twice (check_invariants).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "tests/support/kv_device_model.hpp"
#include "tests/support/scheduler_core_driver.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_swap_core {

using namespace courier;
using actors::outgoing_event;
using actors::scheduler_options;
using mode = scheduler_options::preemption_mode;

namespace {

using test::kv_device;

msg::engine_ready ready_with_host(std::int32_t blocks, std::int32_t host_blocks) {
  msg::engine_ready r = test::fake_engine_ready(blocks);
  r.host_kv_blocks = host_blocks;
  r.kv_block_bytes = 1 << 16;
  r.host_bytes_per_s = 1e10;
  r.linear_flops_per_token = 2e9;  // recomputing a token: 0.2 ms; copying a block twice: 13 us
  r.device_flops = 1e13;
  return r;
}

struct run_result {
  msg::scheduler_stats stats;
  int copies_out = 0, copies_in = 0;
  std::map<msg::request_id, std::vector<msg::token_id>> tokens;
  std::map<msg::request_id, msg::finish_reason> finish;
};

// 16 requests on 16 blocks (preempting all the time), or (`long_ones`) 40 requests of 64 to 380
// prompt tokens and as many out on 64 blocks, 8 at first and one more after each result;
// `fail_step`: the first step that carries copies out is answered with an engine failure.
run_result run(mode m, std::int32_t host_blocks, bool overlap, bool prefix_caching,
               bool fail_step, std::map<msg::request_id, int>& want_out, kv_device& dev,
               bool long_ones = false) {
  const std::int32_t blocks = long_ones ? 64 : 16;
  scheduler_options o;
  o.overlap = overlap;
  o.prefix_caching = prefix_caching;
  o.max_batched_tokens = long_ones ? 512 : 48;
  o.max_num_seqs = 16;
  o.preemption = m;
  actors::scheduler_core core(o, ready_with_host(blocks, host_blocks));
  test::core_events ev;
  std::mt19937 rng(static_cast<unsigned>(host_blocks * 2 + overlap));
  std::vector<outgoing_event> out;
  std::vector<msg::submit> later;  // long_ones: submitted one after each result, as a client would
  for (msg::request_id id = 1; id <= (long_ones ? 40 : 16); ++id) {
    msg::submit s;
    s.id = id;
    const int len =
        long_ones ? 64 + static_cast<int>(rng() % 316) : 10 + static_cast<int>(rng() % 60);
    for (int t = 0; t < len; ++t) s.prompt.push_back(rng() % (id % 2 ? 5 : 500));
    s.max_tokens = long_ones ? 64 + static_cast<int>(rng() % (450 - len))
                             : 10 + static_cast<int>(rng() % 80);
    s.ignore_eos = true;
    dev.prompts[id] = s.prompt;
    want_out[id] = s.max_tokens;
    if (long_ones && id > 8) {
      later.push_back(s);
      continue;
    }
    core.submit(s, out);
    ev.take(out);
  }
  std::reverse(later.begin(), later.end());
  const bool failed = test::run_steps(core, dev, ev, fail_step, [&] {
    if (later.empty()) return;
    core.submit(later.back(), out);
    later.pop_back();
    ev.take(out);
  });
  run_result r;
  r.stats = core.stats();
  r.copies_out = dev.copies_out;
  r.copies_in = dev.copies_in;
  for (const auto& [id, n] : want_out) {
    r.tokens[id] = ev.tokens[id];
    r.finish[id] = ev.last[id].finish;
  }
  if (fail_step) CHECK(failed);
  core.evict_all_cached();
  CHECK(core.stats().num_free_blocks == blocks);
  return r;
}

}  // namespace

TEST_CASE("swap core: swapped-out sequences come back to exactly their KV, and give the tokens "
          "they give without preemption",
          "[scheduler]") {
  for (const bool overlap : {false, true}) {
    for (const bool caching : {false, true}) {
      for (const auto& [m, host] : {std::pair<mode, int>{mode::swap, 64}, {mode::swap, 5},
                                    {mode::automatic, 64}, {mode::recompute, 64}}) {
        INFO("overlap " << overlap << ", prefix caching " << caching << ", mode "
                        << static_cast<int>(m) << ", " << host << " host blocks");
        std::map<msg::request_id, int> want_out;
        kv_device dev;
        const run_result r = run(m, host, overlap, caching, false, want_out, dev);
        for (const auto& [id, n] : want_out) {
          INFO("request " << id);
          CHECK(r.tokens.at(id) ==
                test::expected_tokens(id, static_cast<int>(dev.prompts[id].size()), n));
        }
        const msg::scheduler_stats& st = r.stats;
        CHECK(st.num_preemptions > 0);
        CHECK(st.swap_outs + st.recompute_preemptions == st.num_preemptions);
        // Every copy is a swap, or the host tier's prefix cache taking in an evicted block or
        // giving one back.
        CHECK(st.swapped_out_blocks + st.host_cache_spilled_blocks ==
              static_cast<std::uint64_t>(r.copies_out));
        CHECK(st.swapped_in_blocks + st.host_cache_promoted_blocks ==
              static_cast<std::uint64_t>(r.copies_in));
        if (!caching) CHECK(st.host_cache_spilled_blocks == 0);
        if (m == mode::recompute) {
          CHECK(st.swap_outs == 0);
        } else {
          CHECK(st.swap_outs > 0);
          CHECK(st.swapped_in_blocks == st.swapped_out_blocks);  // every swap came back
        }
        if (host == 5) CHECK(st.recompute_preemptions > 0);  // no room: recomputed instead
      }
    }
  }
}

// The server's benchmark shape (bench/swap-preemption.sh): long prompts and outputs arriving
// while steps run, up to 16 at once on 64 blocks, prefix caching on. Every request finishes with
// its tokens, and every swap comes back.
TEST_CASE("swap core: long requests on few blocks all finish, swapping in and out",
          "[scheduler]") {
  for (const bool overlap : {false, true}) {
    INFO("overlap " << overlap);
    std::map<msg::request_id, int> want_out;
    kv_device dev;
    const run_result r = run(mode::swap, 512, overlap, true, false, want_out, dev, true);
    for (const auto& [id, n] : want_out) {
      INFO("request " << id);
      CHECK(r.tokens.at(id) ==
            test::expected_tokens(id, static_cast<int>(dev.prompts[id].size()), n));
    }
    CHECK(r.stats.swap_outs > 0);
    CHECK(r.stats.swapped_in_blocks == r.stats.swapped_out_blocks);
  }
}

TEST_CASE("swap core: when the step carrying copies out fails, the swapped-out sequences are "
          "recomputed, not resumed from host blocks that may hold nothing",
          "[scheduler]") {
  for (const bool overlap : {false, true}) {
    INFO("overlap " << overlap);
    std::map<msg::request_id, int> want_out;
    kv_device dev;
    const run_result r = run(mode::swap, 64, overlap, false, true, want_out, dev);
    int finished = 0, failed = 0;
    for (const auto& [id, n] : want_out) {
      INFO("request " << id);
      if (r.finish.at(id) == msg::finish_reason::error) {
        ++failed;  // it had a row in the failed step
        continue;
      }
      ++finished;
      CHECK(r.tokens.at(id) ==
            test::expected_tokens(id, static_cast<int>(dev.prompts[id].size()), n));
    }
    CHECK(failed > 0);
    CHECK(finished > 0);
    CHECK(r.stats.swapped_in_blocks < r.stats.swapped_out_blocks);  // a swap was given up
  }
}

}  // namespace courier_test_actors_scheduler_swap_core
