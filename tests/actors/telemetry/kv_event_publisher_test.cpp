// The KV-cache event publisher: what it encodes decodes under vLLM's KVEventBatch schema with
// every field in its place, and what it sends on its socket arrives as vLLM's subscribers read
// it (topic, sequence numbers from 0, payload).
#include "actors/telemetry/kv_event_publisher.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>

#include "tests/support/kv_events_subscriber.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_telemetry_kv_event_publisher {

using namespace courier;

namespace {

cache::cache_event_log three_events() {
  cache::cache_event stored;
  stored.hashes = {0xfedcba9876543210ULL, 7};
  stored.parent = 42;
  stored.tokens = {1, 2, 3, 4, 5, 6, 7, 8};
  stored.block_size = 4;
  stored.adapter_id = 2;
  cache::cache_event first = stored;  // a prompt's first block: no parent, the base model
  first.parent.reset();
  first.adapter_id = 0;
  first.hashes = {9};
  first.tokens = {1, 2, 3, 4};
  cache::cache_event removed;
  removed.what = cache::cache_event::kind::removed;
  removed.hashes = {7};
  cache::cache_event cleared;
  cleared.what = cache::cache_event::kind::cleared;
  return {cleared, stored, first, removed};
}

}  // namespace

TEST_CASE("kv events: a batch encodes as vLLM's KVEventBatch", "[telemetry]") {
  const test::decoded_batch b =
      test::decode_batch(telemetry::encode_kv_event_batch(1733300000.25, three_events()));
  CHECK(b.ts == 1733300000.25);
  REQUIRE(b.events.size() == 4);
  CHECK(b.events[0].tag == "AllBlocksCleared");
  const test::decoded_event& s = b.events[1];
  CHECK(s.tag == "BlockStored");
  CHECK(s.hashes == std::vector<std::uint64_t>{0xfedcba9876543210ULL, 7});
  CHECK(s.parent == std::optional<std::uint64_t>(42));
  CHECK(s.tokens == std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(s.block_size == 4);
  CHECK(s.lora_id == std::optional<std::uint32_t>(2));
  CHECK(s.medium == "GPU");
  CHECK_FALSE(b.events[2].parent.has_value());
  CHECK_FALSE(b.events[2].lora_id.has_value());
  CHECK(b.events[3].tag == "BlockRemoved");
  CHECK(b.events[3].hashes == std::vector<std::uint64_t>{7});
  CHECK(b.events[3].medium == "GPU");
  // The tiers' events: by hash only, under their own medium.
  cache::cache_event_log tiers;
  cache::append_tier_event(&tiers, cache::cache_event::kind::stored, cache::cache_medium::cpu, 5,
                           4);
  cache::append_tier_event(&tiers, cache::cache_event::kind::stored, cache::cache_medium::cpu, 6,
                           4);
  cache::append_tier_event(&tiers, cache::cache_event::kind::removed, cache::cache_medium::disk,
                           8, 0);
  const test::decoded_batch t = test::decode_batch(telemetry::encode_kv_event_batch(1, tiers));
  REQUIRE(t.events.size() == 2);  // the two stored ones are one event
  CHECK(t.events[0].tag == "BlockStored");
  CHECK(t.events[0].hashes == std::vector<std::uint64_t>{5, 6});
  CHECK_FALSE(t.events[0].parent.has_value());
  CHECK(t.events[0].tokens.empty());
  CHECK(t.events[0].block_size == 4);
  CHECK_FALSE(t.events[0].lora_id.has_value());
  CHECK(t.events[0].medium == "CPU");
  CHECK(t.events[1].tag == "BlockRemoved");
  CHECK(t.events[1].hashes == std::vector<std::uint64_t>{8});
  CHECK(t.events[1].medium == "DISK");
  // A ts on the second is still a float (msgspec's `ts: float`), not an integer.
  const std::string whole = telemetry::encode_kv_event_batch(1733300000.0, {});
  CHECK(static_cast<unsigned char>(whole.at(1)) == 0xcb);
  CHECK(test::decode_batch(whole).ts == 1733300000.0);
}

TEST_CASE("kv events: published batches arrive in order with their topic and sequence numbers",
          "[telemetry]") {
  const std::string endpoint = "ipc:///tmp/courier-kv-events-test-" + std::to_string(::getpid());
  telemetry::kv_event_publisher pub({endpoint, "kv@replica-1"});
  test::kv_subscriber sub(endpoint);
  // PUB/SUB: a subscriber sees what is sent after it joined; publish until the first arrives.
  std::optional<test::kv_message> first;
  for (int i = 0; i < 100 && !first; ++i) {
    pub.publish(three_events());
    first = sub.receive(50);
  }
  REQUIRE(first);
  CHECK(first->topic == "kv@replica-1");
  CHECK(first->batch.events.size() == 4);
  pub.publish(three_events());
  pub.publish(three_events());
  std::uint64_t last = first->seq;
  for (int i = 0; i < 2; ++i) {
    std::optional<test::kv_message> m;
    for (int tries = 0; tries < 40 && !m; ++tries) m = sub.receive(50);
    REQUIRE(m);
    CHECK(m->seq > last);  // increasing: batches published before the subscriber joined are gaps
    last = m->seq;
  }
  CHECK_THROWS_WITH(telemetry::kv_event_publisher({"nonsense://x", ""}),
                    Catch::Contains("kv_events.endpoint"));
}


TEST_CASE("kv events: the replay socket sends the batches kept from the sequence number asked, "
          "then the end marker, as vLLM's does",
          "[telemetry]") {
  const std::string base = "ipc:///tmp/courier-kv-replay-test-" + std::to_string(::getpid());
  telemetry::kv_event_options opts{base + "-pub", "kv", base + "-replay", 3};
  std::vector<std::string> sent;
  {
    telemetry::kv_event_publisher pub(opts);
    test::kv_replay_client client(opts.replay_endpoint);
    // Five batches, each a different event count: the buffer keeps the last three (seq 2..4).
    for (std::size_t n = 1; n <= 5; ++n) {
      cache::cache_event_log log = three_events();
      log.resize(n % 4 + 1);
      sent.push_back(telemetry::encode_kv_event_batch(0, log));
      pub.publish(std::move(log));
    }
    bool ended = false;
    std::vector<std::pair<std::uint64_t, std::string>> got;
    for (int i = 0; i < 100 && got.size() < 3; ++i) {  // until all five are through the thread
      got = client.replay(0, ended);
      REQUIRE(ended);
      if (got.size() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE(got.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
      CHECK(got[i].first == i + 2);
      const test::decoded_batch b = test::decode_batch(got[i].second);
      const test::decoded_batch want = test::decode_batch(sent[i + 2]);
      REQUIRE(b.events.size() == want.events.size());
      for (std::size_t e = 0; e < b.events.size(); ++e) {
        CHECK(b.events[e].tag == want.events[e].tag);
        CHECK(b.events[e].hashes == want.events[e].hashes);
      }
    }
    got = client.replay(4, ended);
    CHECK(ended);
    REQUIRE(got.size() == 1);
    CHECK(got[0].first == 4);
    got = client.replay(9, ended);  // nothing from there yet: only the end marker
    CHECK(ended);
    CHECK(got.empty());
  }
  CHECK_THROWS_WITH(telemetry::kv_event_publisher({base + "-pub2", "", "nonsense://x", 3}),
                    Catch::Contains("kv_events.replay_endpoint"));
}

}  // namespace courier_test_actors_telemetry_kv_event_publisher
