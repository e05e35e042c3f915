// The prefix cache's disk tier in the scheduler core, against models of the device's, the host's
// and the disk's blocks (tests/support/kv_device_model.hpp): host tier blocks are written to
// disk, and a prompt that continues past what the device and host hold waits for those blocks
// to be read back into host memory, then copies them to the device. Every row must find exactly
// its prefix's KV, so a read into the wrong host block, a block served after a failed write or a
// damaged read, a host block touched while its I/O runs, or a block served across namespaces
// fails here.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>
#include <string>

#include "tests/support/kv_device_model.hpp"
#include "tests/support/scheduler_core_driver.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_disk_tier_core {

using namespace courier;
using actors::outgoing_event;
using actors::scheduler_options;
using test::disk_model;
using test::kv_device;

namespace {

struct outcome {
  msg::scheduler_stats stats;
  std::map<msg::request_id, int> want_out;
  std::map<msg::request_id, msg::finish_reason> finish;
  std::map<msg::request_id, std::vector<msg::token_id>> tokens;
};

std::vector<std::vector<msg::token_id>> documents(unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::vector<msg::token_id>> docs(6);
  for (auto& d : docs) {
    const int len = 96 + static_cast<int>(rng() % 105);
    for (int t = 0; t < len; ++t) d.push_back(rng() % 500);
  }
  return docs;
}

// Waves of 8 requests, each one of 6 documents and a short question, on 24 device blocks and
// `host_blocks` host blocks (12: neither holds the documents), with `disk_slots` behind them.
outcome run(std::int64_t disk_slots, bool overlap, kv_device& dev, disk_model& disk,
            std::vector<actors::disk_entry> restored = {}, int waves = 6,
            std::int32_t host_blocks = 12) {
  scheduler_options o;
  o.overlap = overlap;
  o.max_batched_tokens = 64;
  o.disk.num_slots = disk_slots;
  o.disk.restored = std::move(restored);
  o.disk.max_writes_in_flight = 8;
  msg::engine_ready r = test::fake_engine_ready(24);
  r.host_kv_blocks = host_blocks;
  actors::scheduler_core core(o, r);
  test::core_events ev;
  std::mt19937 rng(static_cast<unsigned>(disk_slots + overlap * 7 + waves));
  const auto docs = documents(5);
  outcome res;
  std::vector<outgoing_event> out;
  msg::request_id id = 1;
  for (int wave = 0; wave < waves; ++wave) {
    for (int i = 0; i < 8; ++i, ++id) {
      msg::submit s;
      s.id = id;
      s.prompt = docs[rng() % docs.size()];
      for (int t = 0; t < 5 + static_cast<int>(rng() % 6); ++t) s.prompt.push_back(rng() % 500);
      s.max_tokens = 3 + static_cast<int>(rng() % 10);
      s.ignore_eos = true;
      dev.prompts[id] = s.prompt;
      res.want_out[id] = s.max_tokens;
      core.submit(s, out);
      ev.take(out);
      core.check_invariants();
    }
    test::run_steps(core, dev, ev, false, {}, &disk);
  }
  res.stats = core.stats();
  for (const auto& [rid, n] : res.want_out) {
    res.tokens[rid] = ev.tokens[rid];
    res.finish[rid] = ev.last[rid].finish;
  }
  CHECK(res.stats.num_loading == 0);
  core.evict_all_cached();
  CHECK(core.stats().num_free_blocks == 24);
  return res;
}

void check_tokens(const outcome& r, const kv_device& dev) {
  for (const auto& [id, n] : r.want_out) {
    INFO("request " << id);
    CHECK(r.finish.at(id) == msg::finish_reason::length);
    CHECK(r.tokens.at(id) ==
          test::expected_tokens(id, static_cast<int>(dev.prompts.at(id).size()), n));
  }
}

}  // namespace

TEST_CASE(
    "disk tier core: documents evicted from device and host come back from disk, each "
    "row finding exactly its prefix's KV",
    "[scheduler]") {
  for (const bool overlap : {false, true}) {
    INFO("overlap " << overlap);
    kv_device host_dev, disk_dev, ideal_dev;
    disk_model no_disk, disk, none;
    const outcome host_only = run(0, overlap, host_dev, no_disk);
    const outcome with_disk = run(256, overlap, disk_dev, disk);
    const outcome ideal = run(0, overlap, ideal_dev, none, {}, 6, 512);  // a host tier for all
    check_tokens(host_only, host_dev);
    check_tokens(with_disk, disk_dev);
    CHECK(host_only.stats.disk_cache_hit_tokens == 0);
    CHECK(with_disk.stats.disk_written_blocks > 0);
    CHECK(with_disk.stats.disk_read_blocks > 0);
    CHECK(with_disk.stats.disk_prefetches > 0);
    CHECK(with_disk.stats.disk_cache_hit_tokens > 0);
    CHECK(with_disk.stats.disk_cache_hit_tokens <= with_disk.stats.host_cache_hit_tokens);
    CHECK(with_disk.stats.disk_read_failures + with_disk.stats.disk_write_failures == 0);
    // The disk gets back at least a quarter of what a host tier holding every document would
    // reuse beyond the small one (not all: an eviction burst larger than the host tier loses
    // blocks before they can be written; with 32 host blocks it gets nearly all).
    const std::uint64_t small = host_only.stats.cached_tokens, all = ideal.stats.cached_tokens;
    INFO("cached tokens host only " << small << ", with disk " << with_disk.stats.cached_tokens
                                    << ", a host tier for all " << all);
    CHECK(with_disk.stats.cached_tokens >= small + (all - small) / 4);
  }
}

TEST_CASE(
    "disk tier core: failed writes and damaged blocks are dropped, never served, and "
    "lose no request",
    "[scheduler]") {
  for (const bool overlap : {false, true}) {
    INFO("overlap " << overlap);
    kv_device dev;
    disk_model disk;
    disk.fail_write_every = 3;
    disk.corrupt_every = 4;
    const outcome r = run(256, overlap, dev, disk);
    check_tokens(r, dev);
    CHECK(r.stats.disk_write_failures > 0);
    CHECK(r.stats.disk_read_failures > 0);     // the damaged ones, found when read
    CHECK(r.stats.disk_cache_hit_tokens > 0);  // the rest still serve
  }
}

TEST_CASE("disk tier core: a small disk keeps the most recent blocks", "[scheduler]") {
  kv_device dev;
  disk_model disk;
  const outcome r = run(20, false, dev, disk);
  check_tokens(r, dev);
  CHECK(r.stats.num_disk_cached_blocks <= 20);
  CHECK(r.stats.disk_read_blocks > 0);
}

TEST_CASE(
    "disk tier core: a restart finds what the last run wrote (persistence) and serves it "
    "like its own",
    "[scheduler]") {
  kv_device first_dev;
  disk_model disk;
  disk.corrupt_every = 5;  // some of what it left is damaged: found at the read, never served
  (void)run(256, false, first_dev, disk, {}, 3);
  REQUIRE(disk.keys.size() > 20);
  std::set<std::uint64_t> distinct;  // a block evicted and written again is in two slots
  for (const auto& [slot, op] : disk.keys) distinct.insert(op.hash);
  kv_device dev;  // a fresh device and host: only the disk remembers
  const outcome r = run(256, false, dev, disk, disk.restored(), 2);
  check_tokens(r, dev);
  CHECK(r.stats.disk_restored_blocks == distinct.size());
  CHECK(r.stats.disk_cache_hit_tokens > 0);
  CHECK(r.stats.disk_read_failures > 0);
}

// One document of 160 tokens asked about one request at a time, on 24 device blocks and 32 host
// blocks (more than one eviction's burst: a tier smaller loses some), with a disk behind them.
struct one_document {
  actors::scheduler_core core;
  kv_device dev;
  disk_model disk;
  test::core_events ev;
  std::mt19937 rng;
  std::vector<msg::token_id> doc, question;
  msg::request_id id = 1;

  one_document(bool isolate, unsigned seed) : core(options(isolate), ready()), rng(seed) {
    for (int t = 0; t < 160; ++t) doc.push_back(rng() % 500);
    question = doc;
    question.push_back(7);
  }
  static scheduler_options options(bool isolate) {
    scheduler_options o;
    o.isolate_by_tenant = isolate;
    o.disk.num_slots = 256;
    o.disk.max_writes_in_flight = 8;
    return o;
  }
  static msg::engine_ready ready() {
    msg::engine_ready r = test::fake_engine_ready(24);
    r.host_kv_blocks = 32;
    return r;
  }
  msg::request_id submit(const std::vector<msg::token_id>& prompt, const std::string& tenant = "") {
    msg::submit s;
    s.id = id++;
    s.tenant = tenant;
    s.prompt = prompt;
    s.max_tokens = 2;
    s.ignore_eos = true;
    dev.prompts[s.id] = prompt;
    std::vector<outgoing_event> out;
    core.submit(s, out);
    ev.take(out);
    core.check_invariants();
    return s.id;
  }
  void finished(msg::request_id r) {
    CHECK(ev.tokens[r] == test::expected_tokens(r, static_cast<int>(dev.prompts.at(r).size()), 2));
  }
  // Submits and runs to the end (the disk answering): (cached tokens, from disk).
  std::pair<std::uint64_t, std::uint64_t> ask(const std::vector<msg::token_id>& prompt,
                                              const std::string& tenant = "") {
    const msg::scheduler_stats before = core.stats();
    const msg::request_id r = submit(prompt, tenant);
    test::run_steps(core, dev, ev, false, {}, &disk);
    finished(r);
    const msg::scheduler_stats after = core.stats();
    return {after.cached_tokens - before.cached_tokens,
            after.disk_cache_hit_tokens - before.disk_cache_hit_tokens};
  }
  // Other documents push it out of the device's and the host's blocks.
  void evict_doc(const std::string& tenant = "") {
    for (int k = 0; k < 4; ++k) {
      std::vector<msg::token_id> other;
      for (int t = 0; t < 300; ++t) other.push_back(rng() % 500);
      ask(other, tenant);
    }
  }
};

// Tenants' blocks are keyed by their namespace on disk too: tenant A's document, evicted to
// disk, is read back for A, never for B asking the very same prompt.
TEST_CASE("disk tier core: isolated tenants never read each other's blocks from disk",
          "[scheduler]") {
  one_document d(true, 9);
  d.ask(d.doc, "team-a");
  d.evict_doc("team-c");
  REQUIRE(d.core.stats().num_disk_cached_blocks > 0);
  const auto b = d.ask(d.question, "team-b");
  CHECK(b.first == 0);  // nothing of B's is cached anywhere
  CHECK(b.second == 0);
  d.evict_doc("team-c");
  const auto a = d.ask(d.question, "team-a");
  CHECK(a.second > 0);  // A's blocks, from disk
  CHECK(a.first == 160);
}

// A stuck disk delays nobody past the deadline: the request queues without the blocks still
// being read and computes them; the late answer still puts them in the host tier, where the
// next request finds them.
TEST_CASE(
    "disk tier core: reads past their deadline are not waited for, and still count when "
    "they end",
    "[scheduler]") {
  one_document d(false, 3);
  d.ask(d.doc);
  d.evict_doc();
  const msg::request_id late = d.submit(d.question);
  REQUIRE(d.core.stats().num_loading == 1);
  d.disk.take(d.core, d.dev);
  REQUIRE(d.disk.pending.size() == 1);  // its reads, unanswered: the disk is stuck
  std::vector<outgoing_event> out;
  CHECK_FALSE(d.core.plan(out));  // nothing runs: it waits
  d.core.on_disk_deadline(d.disk.pending.front().first.id);
  d.core.check_invariants();
  CHECK(d.core.stats().num_loading == 0);
  test::run_steps(d.core, d.dev, d.ev, false);  // the disk still does not answer
  d.finished(late);
  CHECK(d.core.stats().disk_cache_hit_tokens == 0);  // computed: nothing read in time
  d.core.on_disk_done(d.disk.answer_one(d.dev));     // the late answer
  d.core.check_invariants();
  CHECK(d.core.stats().disk_read_blocks == 10);
  d.core.evict_all_cached();  // the device's copy goes (the host tier has the read ones)
  const auto again = d.ask(d.question);
  CHECK(again.first == 160);
  CHECK(d.core.stats().host_cache_hit_tokens == 160);
}

// The device's head of a prompt whose rest is being read from disk is pinned until the request's
// admission: an eviction meanwhile (a drain takes every cached block it can) leaves it, and the
// request finds it there.
TEST_CASE("disk tier core: the device's head of a prompt is kept while its rest is read from "
          "disk",
          "[scheduler]") {
  one_document d(false, 11);
  d.ask(d.doc);
  d.evict_doc();  // only the disk keeps the document now
  std::vector<msg::token_id> head(d.doc.begin(), d.doc.begin() + 32);
  head.push_back(9);
  d.ask(head);  // its first 2 blocks are back on the device
  const msg::request_id r = d.submit(d.question);
  REQUIRE(d.core.stats().num_loading == 1);  // the other 8 blocks are being read
  d.disk.take(d.core, d.dev);
  REQUIRE(d.disk.pending.size() == 1);
  d.core.evict_all_cached();
  d.core.check_invariants();
  // Every other cached block went; the pinned head stayed (without the pin: 0).
  CHECK(d.core.stats().num_cached_blocks == 2);
  const msg::scheduler_stats before = d.core.stats();
  test::run_steps(d.core, d.dev, d.ev, false, {}, &d.disk);
  d.finished(r);
  const msg::scheduler_stats after = d.core.stats();
  CHECK(after.cached_tokens - before.cached_tokens == 160);  // 32 on the device, 128 from disk
  CHECK(after.disk_cache_hit_tokens - before.disk_cache_hit_tokens == 128);
  d.core.evict_all_cached();
  CHECK(d.core.stats().num_free_blocks == 24);  // the pin went with the admission
}

}  // namespace courier_test_actors_scheduler_disk_tier_core
