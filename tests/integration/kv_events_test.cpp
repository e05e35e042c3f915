// The server's KV-cache events (kv_events.endpoint), read by a subscriber as vLLM's routers read
// them, against what the prefix cache did: each stored block's hash is the chain hash of its
// parent and tokens, a shared prompt head is stored once, replaying stored minus removed gives
// exactly the blocks the cache holds, and draining the cache removes every one.
#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include <unistd.h>

#include "cache/block_hash.hpp"
#include "tests/support/kv_events_subscriber.hpp"
#include "tests/support/runtime_harness.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_kv_events {

using namespace courier;

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

TEST_CASE("kv events: an endpoint that cannot be bound stops the start, naming the key",
          "[integration][kv_events]") {
  auto cfg = test::sim_config("tiny-llama3");
  cfg.kv_events.endpoint = "tcp://256.0.0.1:1";
  CHECK_THROWS_WITH(actors::runtime(cfg), Catch::Contains("kv_events.endpoint"));
}

}  // namespace courier_test_integration_kv_events
