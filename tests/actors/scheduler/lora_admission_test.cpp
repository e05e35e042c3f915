// The scheduler's LoRA admission alone (actors/scheduler/lora_admission): who is admitted while
// slots are short, what the caches key an adapter by, run-time loads and unloads with their
// refusals (vLLM's statuses: 400, 404, 409), and host copies staged and evicted.
#include "actors/scheduler/lora_admission.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "cache/cache_namespace.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_lora_admission {

using namespace courier;
using actors::lora_admission;

namespace {

msg::engine_ready ready(std::int32_t slots, std::int32_t host_copies = 0) {
  msg::engine_ready r;
  r.model_name = "base";
  r.lora_slots = slots;
  r.lora_adapters = {"a", "b", "c"};
  r.lora_adapter_fingerprints = {101, 102, 103};
  r.lora_host_capacity = host_copies;
  r.lora_host_adapters = {"a", "b", "c"};
  if (host_copies > 0) r.lora_host_adapters.resize(static_cast<std::size_t>(host_copies));
  return r;
}

}  // namespace

TEST_CASE("lora admission: names and cache keys; a fingerprint list that does not match is "
          "refused",
          "[scheduler][lora]") {
  lora_admission l(ready(2));
  CHECK(l.known("a"));
  CHECK_FALSE(l.known("z"));
  CHECK(l.cache_key("") == "");
  CHECK(l.cache_key("b") == cache::adapter_key(102));  // by its files, never its name
  CHECK(l.cache_key("z") == "name:z");
  msg::engine_ready bad = ready(2);
  bad.lora_adapter_fingerprints.pop_back();
  CHECK_THROWS_AS(lora_admission(bad), std::invalid_argument);
}

TEST_CASE("lora admission: while a request waits for a slot, later ones pass it only with an "
          "adapter already in a slot that is not the one it waits for",
          "[scheduler][lora]") {
  lora_admission l(ready(1));
  lora_admission::pass p;
  CHECK(l.gate("", p));   // the base needs no slot
  REQUIRE(l.gate("a", p));  // a free slot
  std::optional<actors::lora_hold> a = l.acquire("a");
  const std::vector<msg::lora_load> loads = l.take_loads();
  REQUIRE(loads.size() == 1);
  CHECK(loads[0].adapter == "a");
  CHECK(loads[0].slot == 0);
  CHECK(l.gate("a", p));       // in a slot already: goes ahead
  CHECK_FALSE(l.gate("b", p));  // the one slot is held: waits, and the slot is drained for it
  CHECK(p.waits);
  CHECK(p.drain == 0);
  CHECK_FALSE(l.gate("a", p));  // a's slot is the one b waits for to empty
  CHECK_FALSE(l.gate("c", p));  // a new slot: after b
  CHECK(l.gate("", p));         // the base still goes
  a.reset();                    // a's sequence ends: the slot empties
  lora_admission::pass next;
  CHECK(l.gate("b", next));
  msg::scheduler_stats s;
  l.count(s);
  CHECK(s.lora_slots_in_use == 0);
  CHECK(s.lora_loads == 1);
}

TEST_CASE("lora admission: run-time loads and unloads, refused with vLLM's statuses",
          "[scheduler][lora]") {
  lora_admission none(ready(0));
  CHECK(none.begin_load("x", "base").status == 400);  // no slots
  lora_admission l(ready(2));
  CHECK(l.begin_load("", "base").status == 400);
  CHECK(l.begin_load("base", "base").status == 400);  // the base model's name
  CHECK(l.begin_load("a", "base").status == 409);     // already loaded
  REQUIRE(l.begin_load("x", "base").ok);
  CHECK(l.begin_load("x", "base").status == 409);  // being loaded
  CHECK_FALSE(l.known("x"));
  l.load_done("x", true, 777);
  CHECK(l.known("x"));
  CHECK(l.cache_key("x") == cache::adapter_key(777));
  REQUIRE(l.begin_load("y", "base").ok);
  l.load_done("y", false, 0);  // the read failed: nothing changes, a later load may try again
  CHECK_FALSE(l.known("y"));
  CHECK(l.begin_load("y", "base").ok);

  CHECK(l.unload("z").status == 404);
  REQUIRE(l.unload("x").ok);
  CHECK_FALSE(l.known("x"));                         // new requests are refused
  CHECK(l.begin_load("x", "base").status == 409);    // still being unloaded
  bool used = true;
  auto in_use = [&](const std::string& n) { return n == "x" && used; };
  CHECK(l.take_unloaded(in_use).empty());  // a running request still uses it
  used = false;
  CHECK(l.take_unloaded(in_use) == std::vector<std::string>{"x"});
  CHECK(l.cache_key("x") == "name:x");
  CHECK(l.begin_load("x", "base").ok);  // may come back
}

TEST_CASE("lora admission: with lora.max_cpu_loras, an adapter with no host copy is staged "
          "once, waits until it is read, and the copies beyond the limit are evicted",
          "[scheduler][lora]") {
  lora_admission l(ready(3, 1));  // one host copy: "a"
  lora_admission::pass p;
  CHECK_FALSE(l.gate("b", p));  // no copy to load from: read again first
  std::vector<msg::lora_change> changes = l.take_host_changes();
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].op == msg::lora_change::stage);
  CHECK(changes[0].name == "b");
  lora_admission::pass again;
  CHECK_FALSE(l.gate("c", again));  // the first to wait stages; c waits behind it
  CHECK(l.take_host_changes().size() == 1);  // c's stage too, in its own pass
  CHECK(l.staged("b", true));
  changes = l.take_host_changes();  // two copies now, one allowed: one evicted
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].op == msg::lora_change::evict);
  CHECK_FALSE(l.staged("zzz", true));  // nothing waited for that
  msg::scheduler_stats s;
  l.count(s);
  CHECK(s.lora_host_stages == 2);
  CHECK(s.lora_host_evictions == 1);
}

}  // namespace courier_test_actors_scheduler_lora_admission
