// A hybrid's prefixes through the KV host tier in the scheduler core: snapshots evicted from the
// device are detached (kept in host state rows by their prefix's chain hash), their prefix's
// blocks go to the host tier, and a later prompt on the same document resumes from both: the
// blocks copied back, the state copied into its slot. Against two models of the device at once
// (its KV blocks, kv_device_model.hpp; its state rows, state_device_model.hpp) every row must
// find exactly its prefix's KV and state: a snapshot detached from the wrong prefix, restored
// before its copy out ran, or with KV the host tier does not hold, fails here.
#include <catch2/catch.hpp>

#include <map>
#include <random>

#include "tests/support/kv_device_model.hpp"
#include "tests/support/scheduler_core_driver.hpp"
#include "tests/support/state_device_model.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_hybrid_tiers_core {

using namespace courier;
using actors::outgoing_event;
using actors::scheduler_options;
using test::kv_device;

namespace {

struct outcome {
  msg::scheduler_stats stats;
  int copied_back = 0;  // first rows continuing from a state copied into their slot
};

// 6 documents of 96 to 200 tokens; waves of 8 requests, each a document and a short question,
// on 24 device blocks and 4 snapshot rows (the documents do not all fit: older ones are
// evicted), with `host_blocks` host KV blocks and 16 host state rows. `fail`: the first step
// that carries a copy to host memory is answered with an engine failure (nothing of it runs:
// the snapshots it detached and the blocks it spilled must never be served). `disk_slots`: a
// disk tier behind the host tier (the model of its file: kv_device_model.hpp).
outcome run(std::int32_t host_blocks, bool overlap, bool write_through, bool fail = false,
            std::int64_t disk_slots = 0, std::int32_t host_state_rows = 16) {
  scheduler_options o;
  o.disk.num_slots = disk_slots;
  o.disk.max_writes_in_flight = 8;
  test::disk_model disk;
  o.overlap = overlap;
  o.host_write_through = write_through;
  o.max_batched_tokens = 64;
  o.ssm_checkpoint_tokens = 64;
  msg::engine_ready r = test::fake_hybrid_ready(24, 4, 4, host_state_rows);
  r.host_kv_blocks = host_blocks;
  r.kv_block_bytes = 1 << 16;
  actors::scheduler_core core(o, r);
  test::core_events ev;
  kv_device dev;
  test::state_device states;
  std::mt19937 rng(static_cast<unsigned>(host_blocks + overlap * 7 + write_through * 3));
  bool failed = false;
  std::vector<std::vector<msg::token_id>> docs(6);
  for (auto& d : docs) {
    const int len = 96 + static_cast<int>(rng() % 105);
    for (int t = 0; t < len; ++t) d.push_back(rng() % 500);
  }
  std::map<msg::request_id, int> want_out;
  std::vector<outgoing_event> out;
  msg::request_id id = 1;
  for (int wave = 0; wave < 6; ++wave) {
    for (int i = 0; i < 8; ++i, ++id) {
      msg::submit s;
      s.id = id;
      s.prompt = docs[rng() % docs.size()];
      for (int t = 0; t < 5 + static_cast<int>(rng() % 6); ++t) s.prompt.push_back(rng() % 500);
      s.max_tokens = 3 + static_cast<int>(rng() % 10);
      s.ignore_eos = true;
      dev.prompts[id] = s.prompt;
      states.prompts[id] = s.prompt;
      want_out[id] = s.max_tokens;
      core.submit(s, out);
      ev.take(out);
    }
    failed |= test::run_steps(core, dev, ev, fail && !failed, {}, disk_slots > 0 ? &disk : nullptr,
                              [&](const msg::step_plan& p) { states.run(p, &dev.doomed); });
  }
  CHECK(failed == fail);
  for (const auto& [rid, n] : want_out) {
    INFO("request " << rid);
    if (fail && ev.last[rid].finish == msg::finish_reason::error) continue;
    CHECK(ev.last[rid].finish == msg::finish_reason::length);
    CHECK(ev.tokens[rid] ==
          test::expected_tokens(rid, static_cast<int>(dev.prompts.at(rid).size()), n));
  }
  outcome res;
  res.stats = core.stats();
  res.copied_back = states.copied_back;
  core.evict_all_cached();
  CHECK(core.stats().num_free_blocks == 24);
  return res;
}

}  // namespace

TEST_CASE("hybrid tiers core: documents evicted from the device come back from host memory "
          "with their snapshots, each row finding exactly its prefix's KV and state",
          "[scheduler]") {
  for (const bool overlap : {false, true}) {
    for (const bool write_through : {true, false}) {
      INFO("overlap " << overlap << ", write-through " << write_through);
      const outcome off = run(0, overlap, write_through);
      const outcome on = run(256, overlap, write_through);
      INFO("cached tokens without the tier " << off.stats.cached_tokens << ", with "
                                             << on.stats.cached_tokens);
      CHECK(off.stats.host_cache_hit_tokens == 0);
      CHECK(off.copied_back == 0);
      // Resumes from detached snapshots: their state copied into the slot (counted as hits
      // of snapshots brought back), with the blocks after the device's copied back; the other
      // states copied back are preempted sequences' (swapped, as the host tier allows).
      CHECK(on.stats.snapshot_hits_spilled > 0);
      CHECK(static_cast<std::uint64_t>(on.copied_back) ==
            on.stats.snapshot_hits_spilled + on.stats.swap_outs);
      CHECK(on.stats.host_cache_promoted_blocks > 0);
      CHECK(on.stats.host_cache_hit_tokens ==
            on.stats.host_cache_promoted_blocks * kv_device::bs);
      CHECK(on.stats.cached_tokens > off.stats.cached_tokens);
    }
  }
}

TEST_CASE("hybrid tiers core: behind a small host tier, blocks come back from disk up to a "
          "snapshot kept in host memory",
          "[scheduler]") {
  for (const bool overlap : {false, true}) {
    INFO("overlap " << overlap);
    const outcome host_only = run(40, overlap, true);
    const outcome with_disk = run(40, overlap, true, false, 512);
    INFO("cached tokens with a 40-block host tier " << host_only.stats.cached_tokens
                                                    << ", with a disk behind it "
                                                    << with_disk.stats.cached_tokens);
    CHECK(with_disk.stats.disk_read_blocks > 0);
    CHECK(with_disk.stats.disk_cache_hit_tokens > 0);
    CHECK(with_disk.stats.cached_tokens > host_only.stats.cached_tokens);
    // Without host state rows no snapshot outlives the device: blocks are written to disk, but
    // none is read back (it could not be resumed from).
    const outcome no_states = run(40, overlap, true, false, 512, 0);
    CHECK(no_states.stats.disk_written_blocks > 0);
    CHECK(no_states.stats.disk_read_blocks == 0);
  }
}

TEST_CASE("hybrid tiers core: snapshots detached and blocks spilled by a failed step are never "
          "served",
          "[scheduler]") {
  for (const bool overlap : {false, true}) {
    INFO("overlap " << overlap);
    const outcome r = run(256, overlap, false, true);  // write-back: copies out at eviction
    CHECK(r.stats.snapshot_hits_spilled > 0);  // later ones still resume from the host tiers
  }
}

}  // namespace courier_test_actors_scheduler_hybrid_tiers_core
