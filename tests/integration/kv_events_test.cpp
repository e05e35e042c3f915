// The server's KV-cache events (kv_events.endpoint), read by a subscriber as vLLM's routers read
// them, against what the prefix cache did: each stored block's hash is the chain hash of its
// parent and tokens, a shared prompt head is stored once, replaying stored minus removed gives
// exactly the blocks the cache holds, and draining the cache removes every one.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <thread>

#include <unistd.h>

#include "cache/block_hash.hpp"
#include "tests/support/kv_events_subscriber.hpp"
#include "tests/support/runtime_harness.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_kv_events {

using namespace courier;
namespace fs = std::filesystem;

namespace {

// Applies every batch that arrives within `quiet_ms` of the last one to `live` (stored minus
// removed), checking each stored block's hash against its parent and tokens; returns the
// batches' events in order.
std::vector<test::decoded_event> apply_until_quiet(test::kv_subscriber& sub,
                                                   std::set<std::uint64_t>& live,
                                                   std::uint64_t root, int quiet_ms) {
  std::vector<test::decoded_event> seen;
  while (std::optional<test::kv_message> m = sub.receive(quiet_ms)) {
    for (const test::decoded_event& e : m->batch.events) {
      seen.push_back(e);
      if (e.tag == "AllBlocksCleared") live.clear();
      if (e.tag == "BlockRemoved") {
        for (std::uint64_t h : e.hashes) CHECK(live.erase(h) == 1);
      }
      if (e.tag != "BlockStored") continue;
      REQUIRE(e.tokens.size() == e.hashes.size() * e.block_size);
      std::uint64_t h = e.parent.value_or(root);
      if (e.parent) CHECK(live.count(*e.parent) == 1);  // its parent is still stored
      for (std::size_t b = 0; b < e.hashes.size(); ++b) {
        h = cache::chain_hash(h, e.tokens.data() + b * e.block_size, e.block_size);
        CHECK(e.hashes[b] == h);
        CHECK(live.insert(h).second);  // stored once
      }
      CHECK(e.medium == "GPU");
      CHECK_FALSE(e.lora_id.has_value());
    }
  }
  return seen;
}

}  // namespace

TEST_CASE("kv events: the server publishes what its prefix cache stores and removes",
          "[integration][kv_events]") {
  auto cfg = test::sim_config("tiny-llama3");
  cfg.kv_events.endpoint = "ipc:///tmp/courier-kv-int-" + std::to_string(::getpid());
  test::harness h(cfg);
  test::kv_subscriber sub(cfg.kv_events.endpoint);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // PUB/SUB: join before events

  const std::int32_t bs = h.rt().ready().block_size;
  std::vector<msg::token_id> head;
  for (int t = 0; t < 4 * bs; ++t) head.push_back(static_cast<msg::token_id>(100 + t));
  for (int i = 0; i < 8; ++i) {
    msg::submit s;
    s.id = static_cast<msg::request_id>(i + 1);
    s.prompt = head;
    for (int t = 0; t < 3 * bs / 2 + i; ++t) s.prompt.push_back(static_cast<msg::token_id>(900 + 37 * i + t));
    s.max_tokens = 8;
    s.ignore_eos = true;
    h.submit(s);
    if (i == 0) h.wait_all();  // the first stores the head; the others find it
  }
  h.wait_all();
  const msg::scheduler_stats st = h.settled_stats();

  const std::uint64_t root = cache::namespace_hash(cache::cache_namespace{});
  std::set<std::uint64_t> live;
  const auto seen = apply_until_quiet(sub, live, root, 500);
  CHECK(live.size() == static_cast<std::size_t>(st.num_cached_blocks));
  REQUIRE_FALSE(seen.empty());
  // The head's blocks were stored once, by the first request.
  std::uint64_t hh = root;
  std::map<std::uint64_t, int> stored_count;
  for (const auto& e : seen) {
    for (std::uint64_t x : e.hashes) {
      if (e.tag == "BlockStored") ++stored_count[x];
    }
  }
  for (int b = 0; b < 4; ++b) {
    hh = cache::chain_hash(hh, head.data() + b * bs, static_cast<std::size_t>(bs));
    CHECK(stored_count[hh] == 1);
  }
  // Draining evicts every stored block: each is removed.
  (void)h.drain();
  (void)apply_until_quiet(sub, live, root, 500);
  CHECK(live.empty());
}

TEST_CASE("kv events: the KV host and disk tiers publish their blocks under CPU and DISK, and "
          "each medium's stored minus removed is what that tier holds",
          "[integration][kv_events][disk]") {
  const fs::path folder =
      fs::temp_directory_path() / ("courier-kv-events-disk-" + std::to_string(::getpid()));
  fs::create_directories(folder);
  auto cfg = test::sim_config("tiny-llama3");
  cfg.kv_events.endpoint = "ipc:///tmp/courier-kv-tiers-" + std::to_string(::getpid());
  cfg.scheduler.num_kv_blocks = 24;  // the documents (~120 blocks) do not fit: the tiers fill
  cfg.cache.host_tier_mb = 1;  // 32 blocks of f32 KV (sim), 64 of bf16 (cuda): nor here, so
                               // blocks go on to disk
  cfg.cache.disk_tier_path = folder.string();
  cfg.cache.disk_tier_gb = 0.02;
  cfg.cache.disk_tier_persist = true;  // for the restart below
  std::map<std::string, std::set<std::uint64_t>> live;  // by medium
  std::set<std::uint64_t> ever_on_device;
  std::map<std::string, int> stored, removed;
  auto apply = [&](test::kv_subscriber& sub) {
    while (std::optional<test::kv_message> m = sub.receive(500)) {
      for (const test::decoded_event& e : m->batch.events) {
        if (e.tag == "AllBlocksCleared") live.clear();
        if (e.tag == "BlockRemoved") {
          for (std::uint64_t h : e.hashes) CHECK(live[e.medium].erase(h) == 1);
          removed[e.medium] += static_cast<int>(e.hashes.size());
        }
        if (e.tag != "BlockStored") continue;
        stored[e.medium] += static_cast<int>(e.hashes.size());
        for (std::uint64_t h : e.hashes) {
          CHECK(live[e.medium].insert(h).second);  // stored once in each medium
          if (e.medium == "GPU") ever_on_device.insert(h);
          CHECK(ever_on_device.count(h) == 1);  // a tier's block: one the device's events named
        }
        if (e.medium != "GPU") {  // by hash only, as vLLM's offloading connector's
          CHECK_FALSE(e.parent.has_value());
          CHECK(e.tokens.empty());
          CHECK_FALSE(e.lora_id.has_value());
          CHECK(e.block_size == 16);
        }
      }
    }
  };
  {
    test::harness h(cfg);
    test::kv_subscriber sub(cfg.kv_events.endpoint);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // PUB/SUB: join before events
    std::mt19937 rng(29);
    std::vector<std::vector<msg::token_id>> docs(10);
    for (auto& d : docs) {
      for (int t = 0; t < 150 + static_cast<int>(rng() % 100); ++t) d.push_back(rng() % 2048);
    }
    for (int wave = 0; wave < 8; ++wave) {
      for (int k = 0; k < 3; ++k) {
        msg::submit s;
        s.id = static_cast<msg::request_id>(wave * 3 + k + 1);
        s.prompt = docs[rng() % docs.size()];
        for (int t = 0; t < 5; ++t) s.prompt.push_back(rng() % 2048);
        s.max_tokens = 4;
        s.ignore_eos = true;
        h.submit(s);
      }
      h.wait_all();
    }
    const msg::scheduler_stats st = h.settled_stats();
    apply(sub);
    CHECK(live["GPU"].size() == static_cast<std::size_t>(st.num_cached_blocks));
    CHECK(live["CPU"].size() == static_cast<std::size_t>(st.num_host_cached_blocks));
    CHECK(live["DISK"].size() == static_cast<std::size_t>(st.num_disk_cached_blocks));
    CHECK(removed["CPU"] > 0);  // the host tier was full: it let blocks go
    CHECK(stored["DISK"] > 0);
    // Draining the device's cache removes every block there; their copies to the host tier
    // go with the next step (spills wait for a plan with rows): one more request, then each
    // medium's blocks are the tier's again.
    (void)h.drain();
    apply(sub);
    CHECK(live["GPU"].empty());
    msg::submit last;
    last.id = 100;
    last.prompt = docs[0];
    last.max_tokens = 2;
    last.ignore_eos = true;
    h.submit(last);
    h.wait_all();
    const msg::scheduler_stats end = h.settled_stats();
    apply(sub);
    CHECK(live["GPU"].size() == static_cast<std::size_t>(end.num_cached_blocks));
    CHECK(live["CPU"].size() == static_cast<std::size_t>(end.num_host_cached_blocks));
    CHECK(live["DISK"].size() == static_cast<std::size_t>(end.num_disk_cached_blocks));
  }
  // A restart finds the disk tier's blocks and says so first: the first batch (replayed from
  // sequence number 0) is an all-cleared, then the blocks restored, under DISK.
  cfg.kv_events.replay_endpoint = cfg.kv_events.endpoint + "-replay";
  test::harness again(cfg);
  msg::submit one;
  one.id = 1;
  one.prompt = {1, 2, 3};
  one.max_tokens = 1;
  again.submit(one);
  again.wait_all();
  const msg::scheduler_stats st = again.settled_stats();
  REQUIRE(st.disk_restored_blocks > 0);
  test::kv_replay_client client(cfg.kv_events.replay_endpoint);
  bool ended = false;
  const auto got = client.replay(0, ended);
  REQUIRE_FALSE(got.empty());
  CHECK(got[0].first == 0);
  const test::decoded_batch first = test::decode_batch(got[0].second);
  REQUIRE(first.events.size() >= 2);
  CHECK(first.events[0].tag == "AllBlocksCleared");
  CHECK(first.events[1].tag == "BlockStored");
  CHECK(first.events[1].medium == "DISK");
  CHECK(first.events[1].hashes.size() == st.disk_restored_blocks);
  for (std::uint64_t h : first.events[1].hashes) CHECK(live["DISK"].count(h) == 1);
  fs::remove_all(folder);
}

TEST_CASE("kv events: an endpoint that cannot be bound stops the start, naming the key",
          "[integration][kv_events]") {
  auto cfg = test::sim_config("tiny-llama3");
  cfg.kv_events.endpoint = "tcp://256.0.0.1:1";
  CHECK_THROWS_WITH(actors::runtime(cfg), Catch::Contains("kv_events.endpoint"));
}

}  // namespace courier_test_integration_kv_events
