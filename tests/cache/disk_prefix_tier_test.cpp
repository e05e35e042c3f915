// The disk tier's index: which slot holds which block. Slots are never lost or shared, an entry
// being written or read is never evicted (so its slot is never reused under the I/O), and a
// block is found only under its own prefix.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <vector>

#include "cache/disk_prefix_tier.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_cache_disk_prefix_tier {

using courier::cache::disk_prefix_tier;
using courier::cache::token_id;

namespace {

std::vector<token_id> tokens_of(std::uint64_t h) {
  return {static_cast<token_id>(h), static_cast<token_id>(h >> 8), 7, 9};
}

}  // namespace

TEST_CASE("disk prefix tier: a written block is found under its prefix and tokens only",
          "[cache]") {
  disk_prefix_tier t(4, 4);
  const auto toks = tokens_of(11);
  const auto slot = t.reserve(11, 3, toks.data());
  REQUIRE(slot);
  CHECK_FALSE(t.contains(3, 11, toks.data()));  // not until written
  CHECK_FALSE(t.reserve(11, 3, toks.data()));   // one entry per block
  t.written(11, *slot, true);
  CHECK(t.contains(3, 11, toks.data()));
  CHECK_FALSE(t.contains(4, 11, toks.data()));  // another parent
  auto other = toks;
  other[2] = 8;
  CHECK_FALSE(t.contains(3, 11, other.data()));  // other tokens
  const auto failed = t.reserve(12, 11, tokens_of(12).data());
  REQUIRE(failed);
  t.written(12, *failed, false);  // a failed write leaves nothing behind
  CHECK_FALSE(t.has(12));
  CHECK(t.size() == 1);
  t.check_invariants();
}

TEST_CASE("disk prefix tier: a read that finds the block damaged drops it", "[cache]") {
  disk_prefix_tier t(2, 4);
  const auto slot = *t.reserve(5, 1, tokens_of(5).data());
  t.written(5, slot, true);
  REQUIRE(t.start_read(5));
  REQUIRE(t.start_read(5));
  t.read_done(5, slot, false);
  CHECK_FALSE(t.contains(1, 5, tokens_of(5).data()));  // not served again
  CHECK(t.start_read(5) == nullptr);
  CHECK(t.has(5));  // dropped when its other read ends
  t.read_done(5, slot, true);
  CHECK_FALSE(t.has(5));
  t.check_invariants();
}

TEST_CASE("disk prefix tier: random operations never lose a slot nor evict one under I/O",
          "[cache]") {
  std::mt19937 rng(42);
  disk_prefix_tier t(16, 4);
  std::map<std::uint64_t, std::int64_t> writing;  // hash -> slot
  std::map<std::uint64_t, std::int64_t> reading;
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t h = 1 + rng() % 64;
    const auto toks = tokens_of(h);
    switch (rng() % 5) {
      case 0:
      case 1:
        if (auto s = t.reserve(h, 0, toks.data())) {
          CHECK_FALSE(writing.count(h));
          for (const auto& [other, slot] : writing) CHECK(slot != *s);
          for (const auto& [other, slot] : reading) CHECK(slot != *s);
          writing[h] = *s;
        }
        break;
      case 2:
        if (!writing.empty()) {
          auto it = std::next(writing.begin(), static_cast<long>(rng() % writing.size()));
          t.written(it->first, it->second, rng() % 4 != 0);
          writing.erase(it);
        }
        break;
      case 3:
        if (!reading.count(h) && t.contains(0, h, toks.data())) {
          const auto* e = t.start_read(h);
          REQUIRE(e);
          reading[h] = e->slot;
        }
        break;
      case 4:
        if (!reading.empty()) {
          auto it = std::next(reading.begin(), static_cast<long>(rng() % reading.size()));
          t.read_done(it->first, it->second, rng() % 8 != 0);
          reading.erase(it);
        }
        break;
    }
    for (const auto& [hash, slot] : writing) REQUIRE(t.has(hash));  // never evicted under I/O
    for (const auto& [hash, slot] : reading) REQUIRE(t.has(hash));
    t.check_invariants();
  }
}

}  // namespace courier_test_cache_disk_prefix_tier
