// The KV-cache event publisher: what it encodes decodes under vLLM's KVEventBatch schema with
// every field in its place, and what it sends on its socket arrives as vLLM's subscribers read
// it (topic, sequence numbers from 0, payload).
#include "actors/telemetry/kv_event_publisher.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

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
      test::decode_batch(telemetry::encode_kv_event_batch(1733300000.25, three_events(), "GPU"));
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
}

TEST_CASE("kv events: published batches arrive in order with their topic and sequence numbers",
          "[telemetry]") {
  const std::string endpoint = "ipc:///tmp/courier-kv-events-test-" + std::to_string(::getpid());
  telemetry::kv_event_publisher pub({endpoint, "kv@replica-1", "GPU"});
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
  CHECK_THROWS_WITH(telemetry::kv_event_publisher({"nonsense://x", "", "GPU"}),
                    Catch::Contains("kv_events.endpoint"));
}

}  // namespace courier_test_actors_telemetry_kv_event_publisher
