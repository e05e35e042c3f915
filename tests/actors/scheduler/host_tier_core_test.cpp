// The prefix cache's host tier in the scheduler core, against a model of the device's and host's
// KV blocks (tests/support/kv_device_model.hpp): blocks the device's prefix cache evicts are
// copied to host memory and copied back when a later prompt continues past what the device still
// holds. Every row must find exactly its prefix's KV, so a promotion from the wrong host block,
// one whose copy out never ran (a failed step), or one served across namespaces fails here.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <string>
#include <utility>

#include "tests/support/kv_device_model.hpp"
#include "tests/support/scheduler_core_driver.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_host_tier_core {

using namespace courier;
using actors::outgoing_event;
using actors::scheduler_options;
using test::kv_device;

namespace {

struct outcome {
  msg::scheduler_stats stats;
  std::map<msg::request_id, std::vector<msg::token_id>> tokens;
  std::map<msg::request_id, msg::finish_reason> finish;
  std::map<msg::request_id, int> want_out;
};

// 6 documents of 96 to 200 tokens; waves of 8 requests, each a document and a short question,
// on 24 device blocks (the documents do not all fit: older ones are evicted). `fail_spill`: the
// first step that carries a copy to host is answered with an engine failure (with write-through
// off: blocks are then copied out when evicted, in the step's stream order).
outcome run(std::int32_t host_blocks, bool overlap, bool fail_spill, kv_device& dev,
            bool tenants = false, bool write_through = true) {
  scheduler_options o;
  o.overlap = overlap;
  o.host_write_through = write_through && !fail_spill;
  o.max_batched_tokens = 64;
  o.isolate_by_tenant = tenants;
  msg::engine_ready r = test::fake_engine_ready(24);
  r.host_kv_blocks = host_blocks;
  actors::scheduler_core core(o, r);
  test::core_events ev;
  std::mt19937 rng(static_cast<unsigned>(host_blocks + overlap * 7 + fail_spill * 3));
  std::vector<std::vector<msg::token_id>> docs(6);
  for (auto& d : docs) {
    const int len = 96 + static_cast<int>(rng() % 105);
    for (int t = 0; t < len; ++t) d.push_back(rng() % 500);
  }
  outcome res;
  std::vector<outgoing_event> out;
  bool failed = false;
  msg::request_id id = 1;
  for (int wave = 0; wave < 6; ++wave) {
    for (int i = 0; i < 8; ++i, ++id) {
      msg::submit s;
      s.id = id;
      s.tenant = tenants && i % 2 ? "team-b" : "team-a";
      s.prompt = docs[rng() % docs.size()];
      for (int t = 0; t < 5 + static_cast<int>(rng() % 6); ++t) s.prompt.push_back(rng() % 500);
      s.max_tokens = 3 + static_cast<int>(rng() % 10);
      s.ignore_eos = true;
      dev.prompts[id] = s.prompt;
      res.want_out[id] = s.max_tokens;
      core.submit(s, out);
      ev.take(out);
    }
    failed |= test::run_steps(core, dev, ev, fail_spill && !failed);
  }
  if (fail_spill) CHECK(failed);
  res.stats = core.stats();
  for (const auto& [rid, n] : res.want_out) {
    res.tokens[rid] = ev.tokens[rid];
    res.finish[rid] = ev.last[rid].finish;
  }
  core.evict_all_cached();
  CHECK(core.stats().num_free_blocks == 24);
  return res;
}

void check_tokens(const outcome& r, const kv_device& dev, bool allow_failed = false) {
  for (const auto& [id, n] : r.want_out) {
    INFO("request " << id);
    if (allow_failed && r.finish.at(id) == msg::finish_reason::error) continue;
    CHECK(r.tokens.at(id) ==
          test::expected_tokens(id, static_cast<int>(dev.prompts.at(id).size()), n));
  }
}

}  // namespace

TEST_CASE("host tier core: documents evicted from the device come back from host memory, "
          "each row finding exactly its prefix's KV",
          "[scheduler]") {
  for (const bool overlap : {false, true}) {
    INFO("overlap " << overlap);
    kv_device off_dev, on_dev, back_dev;
    const outcome off = run(0, overlap, false, off_dev);
    const outcome on = run(256, overlap, false, on_dev);
    const outcome back = run(256, overlap, false, back_dev, false, false);  // copied out at eviction
    check_tokens(off, off_dev);
    check_tokens(on, on_dev);
    check_tokens(back, back_dev);
    CHECK(back.stats.host_cache_written_blocks == 0);
    CHECK(back.stats.host_cache_promoted_blocks > 0);
    CHECK(off.stats.host_cache_hit_tokens == 0);
    CHECK(on.stats.host_cache_spilled_blocks > 0);
    CHECK(on.stats.host_cache_written_blocks > 0);
    CHECK(on.stats.host_cache_promoted_blocks > 0);
    CHECK(on.stats.host_cache_hit_tokens ==
          on.stats.host_cache_promoted_blocks * kv_device::bs);
    // The host tier's hits are reused prompt tokens like the device's.
    CHECK(on.stats.cached_tokens >= off.stats.cached_tokens + on.stats.host_cache_hit_tokens / 2);
    INFO("cached tokens without the tier " << off.stats.cached_tokens << ", with "
                                           << on.stats.cached_tokens);
    CHECK(on.stats.cached_tokens > off.stats.cached_tokens);
  }
}

TEST_CASE("host tier core: a tier smaller than what is evicted keeps the most recent, and a "
          "failed step's spills are forgotten, never served",
          "[scheduler]") {
  for (const bool overlap : {false, true}) {
    INFO("overlap " << overlap);
    kv_device small_dev, failing_dev;
    const outcome small = run(12, overlap, false, small_dev);
    check_tokens(small, small_dev);
    CHECK(small.stats.host_cache_promoted_blocks > 0);
    CHECK(small.stats.num_host_cached_blocks <= 12);
    const outcome failing = run(256, overlap, true, failing_dev);
    check_tokens(failing, failing_dev, true);
    CHECK(failing.stats.host_cache_promoted_blocks > 0);
  }
}

// Tenants' blocks are keyed by their namespace in every tier: tenant A's document, evicted to
// host memory, is found again by A, never by B asking the very same prompt.
TEST_CASE("host tier core: isolated tenants never share host blocks", "[scheduler]") {
  scheduler_options o;
  o.isolate_by_tenant = true;
  msg::engine_ready ready = test::fake_engine_ready(24);
  ready.host_kv_blocks = 256;
  test::core_driver d(o, ready);
  std::mt19937 rng(9);
  std::vector<msg::token_id> doc;
  for (int t = 0; t < 160; ++t) doc.push_back(rng() % 500);
  msg::request_id id = 1;
  auto ask = [&](const std::string& tenant, const std::vector<msg::token_id>& prompt) {
    msg::submit s;
    s.id = id++;
    s.tenant = tenant;
    s.prompt = prompt;
    s.max_tokens = 2;
    s.ignore_eos = true;
    const msg::scheduler_stats before = d.core.stats();
    d.submit(s);
    d.run();
    const msg::scheduler_stats after = d.core.stats();
    return std::make_pair(after.cached_tokens - before.cached_tokens,
                          after.host_cache_hit_tokens - before.host_cache_hit_tokens);
  };
  auto evict_doc = [&] {  // other documents push A's out of the device's 24 blocks
    for (int k = 0; k < 3; ++k) {
      std::vector<msg::token_id> other;
      for (int t = 0; t < 300; ++t) other.push_back(rng() % 500);
      ask("team-c", other);
    }
  };
  std::vector<msg::token_id> question = doc;
  question.push_back(7);
  ask("team-a", doc);
  evict_doc();
  REQUIRE(d.core.stats().num_host_cached_blocks > 0);
  const auto b = ask("team-b", question);
  CHECK(b.first == 0);  // nothing of B's is cached anywhere
  CHECK(b.second == 0);
  evict_doc();
  const auto a = ask("team-a", question);
  CHECK(a.second == 160);  // A's 10 blocks, from host memory
  CHECK(a.first == 160);
}

}  // namespace courier_test_actors_scheduler_host_tier_core
