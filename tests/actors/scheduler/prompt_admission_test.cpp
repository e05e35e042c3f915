// A waiting sequence's first blocks (actors/scheduler/prompt_admission), against its contract:
// the prompt minus its last token is looked up in whole blocks (vLLM's rule: the last token is
// always computed, it samples the first output); the reused blocks and those of the first chunk
// are held, the chunk within the budget; without room nothing is held and nothing counted;
// prompt logprobs reuse nothing (every prompt position is scored).
#include "actors/scheduler/prompt_admission.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <utility>
#include <vector>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_prompt_admission {

using namespace courier;
using actors::prompt_admission;
using actors::sequence;

namespace {

constexpr std::int32_t kBlock = 4;

std::vector<msg::token_id> tokens(int n, int first = 100) {
  std::vector<msg::token_id> t;
  for (int i = 0; i < n; ++i) t.push_back(first + i);
  return t;
}

sequence waiting(std::vector<msg::token_id> prompt) {
  sequence s;
  s.req.id = 1;
  s.req.prompt = prompt;
  s.req.max_tokens = 4;
  s.tokens = prompt;
  s.num_prompt = static_cast<std::int32_t>(prompt.size());
  return s;
}

// A pool of `blocks` device blocks of 4 tokens with prefix caching, and the pieces admission
// counts into.
struct rig {
  explicit rig(std::int32_t blocks)
      : kv(blocks, kBlock, true),
        snaps(kv, stats, 0, false),
        admission(kv, snaps, copies, stats, report, false) {}
  std::int32_t free_blocks() {
    msg::scheduler_stats s;
    kv.count(s);
    return s.num_free_blocks;
  }
  // `prompt`'s full blocks computed by an earlier request and left in the prefix cache.
  void cache(const std::vector<msg::token_id>& prompt) {
    sequence s = waiting(prompt);
    std::int32_t fed = 0;
    REQUIRE(admission.admit(s, {}, 1000, fed));
    const auto full = static_cast<std::int32_t>(prompt.size()) / kBlock;
    kv.insert({}, s.tokens, s.blocks, full, s.num_in_cache);
    kv.release(s.blocks);
  }

  // What the report tells telemetry about lookups since the last call: {queried, hit}.
  std::pair<std::uint64_t, std::uint64_t> lookups() {
    const std::optional<msg::telemetry_report> r = report.take(stats, 0, 0, 0.0);
    if (!r) return {0, 0};
    return {r->prefix_queries, r->prefix_hits};
  }

  msg::scheduler_stats stats;
  actors::kv_manager kv;
  actors::hybrid_snapshots snaps;
  actors::copy_batches copies;
  actors::scheduler_report report;
  prompt_admission admission;
};

}  // namespace

TEST_CASE("prompt admission: a prompt reuses its cached whole blocks, less its last token's",
          "[scheduler]") {
  rig r(16);
  const std::vector<msg::token_id> doc = tokens(12);  // 3 whole blocks
  r.cache(doc);
  r.lookups();
  // The same 12 tokens: the last one must be computed, so 2 blocks (8 tokens) are reused.
  sequence s = waiting(doc);
  std::int32_t fed = -1;
  REQUIRE(r.admission.admit(s, {}, 1000, fed));
  CHECK(s.num_computed == 8);
  CHECK(fed == 4);
  CHECK(s.blocks.size() == 3);  // 2 reused, 1 fresh for tokens 8..11
  CHECK(r.lookups() == std::pair<std::uint64_t, std::uint64_t>{12, 8});
  // A longer prompt over the same document reuses all 3 blocks.
  std::vector<msg::token_id> longer = doc;
  for (msg::token_id t : tokens(6, 900)) longer.push_back(t);
  sequence l = waiting(longer);
  l.req.id = 2;
  REQUIRE(r.admission.admit(l, {}, 1000, fed));
  CHECK(l.num_computed == 12);
  CHECK(fed == 6);
  CHECK(l.blocks.ids()[0] == s.blocks.ids()[0]);  // one copy of the shared prefix
  CHECK(l.blocks.ids()[1] == s.blocks.ids()[1]);
}

TEST_CASE("prompt admission: the first chunk stays within the budget, its blocks too",
          "[scheduler]") {
  rig r(16);
  sequence s = waiting(tokens(20));
  std::int32_t fed = -1;
  REQUIRE(r.admission.admit(s, {}, 6, fed));
  CHECK(fed == 6);
  CHECK(s.num_computed == 0);
  CHECK(s.blocks.size() == 2);  // tokens 0..5
  CHECK(r.free_blocks() == 14);
}

TEST_CASE("prompt admission: without blocks for the first chunk nothing is held or counted",
          "[scheduler]") {
  rig r(4);
  const std::vector<msg::token_id> doc = tokens(8);
  r.cache(doc);  // 2 cached blocks, unreferenced (evictable)
  r.lookups();
  sequence hold = waiting(tokens(8, 500));
  hold.req.id = 9;
  std::int32_t fed = 0;
  REQUIRE(r.admission.admit(hold, {}, 1000, fed));  // takes the 2 free blocks
  r.lookups();
  // 8 cached + 16 new tokens need 4 more blocks; only the 2 cached ones could be evicted.
  std::vector<msg::token_id> longer = doc;
  for (msg::token_id t : tokens(16, 900)) longer.push_back(t);
  sequence s = waiting(longer);
  s.req.id = 2;
  CHECK_FALSE(r.admission.admit(s, {}, 1000, fed));
  CHECK(s.blocks.size() == 0);
  CHECK(s.num_computed == 0);
  CHECK(r.lookups() == std::pair<std::uint64_t, std::uint64_t>{0, 0});
  // The cached blocks were released, not leaked: a prompt that fits evicts them and goes.
  sequence small = waiting(tokens(8, 700));
  small.req.id = 3;
  CHECK(r.admission.admit(small, {}, 1000, fed));
  CHECK(small.blocks.size() == 2);
}

TEST_CASE("prompt admission: a request for prompt logprobs reuses nothing", "[scheduler]") {
  rig r(16);
  const std::vector<msg::token_id> doc = tokens(12);
  r.cache(doc);
  r.lookups();
  sequence s = waiting(doc);
  s.req.sampling.prompt_logprobs = 0;
  std::int32_t fed = -1;
  REQUIRE(r.admission.admit(s, {}, 1000, fed));
  CHECK(s.num_computed == 0);
  CHECK(fed == 12);
  CHECK(r.lookups().first == 0);  // not looked up at all
}

}  // namespace courier_test_actors_scheduler_prompt_admission
