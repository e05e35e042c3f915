// Prompt lookup on the scheduler's side (actors/scheduler/prompt_lookup): drafts are what
// followed the latest earlier occurrence of the sequence's trailing n-gram (vLLM's ngram
// "prompt lookup" proposer), bounded by the draft length, the row's budget and max_tokens; a
// penalised request gets none; verification is counted by source; a finished request's tokens
// serve its scope's later requests (tenant-scoped: no tenant, no sharing).
#include "actors/scheduler/prompt_lookup.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_prompt_lookup {

using namespace courier;
using actors::prompt_lookup;
using actors::sequence;

namespace {

actors::prompt_lookup_options on(std::size_t shared_bytes = 0) {
  actors::prompt_lookup_options o;
  o.enabled = true;
  o.num_draft = 4;
  o.shared.capacity_bytes = shared_bytes;
  o.shared.min_scope_tokens = 16;
  o.shared.ngram.min_n = 2;
  o.shared.ngram.max_n = 2;
  return o;
}

sequence decoding(std::vector<msg::token_id> tokens, std::int32_t max_total = 100) {
  sequence s;
  s.req.id = 1;
  s.tokens = tokens;
  s.num_prompt = static_cast<std::int32_t>(tokens.size());
  s.max_total = max_total;
  return s;
}

// The scope of `tenant`'s requests, as propose() takes it.
std::function<cache::lookup_scope()> scope(const std::string& tenant) {
  return [tenant] { return cache::lookup_scope{"w", "t", "", tenant}; };
}

}  // namespace

TEST_CASE("prompt lookup: drafts continue the trailing n-gram's earlier occurrence",
          "[scheduler]") {
  msg::scheduler_stats stats;
  prompt_lookup lookup(on(), stats);
  sequence s = decoding({5, 6, 7, 8, 9, 5, 6});  // "5 6" was followed by 7 8 9 5
  cache::proposal_source source = cache::proposal_source::none;
  CHECK(lookup.propose(s, scope(""), 16, source) == std::vector<msg::token_id>{7, 8, 9, 5});
  CHECK(source == cache::proposal_source::own);
  sequence tight = decoding({5, 6, 7, 8, 9, 5, 6});
  CHECK(lookup.propose(tight, scope(""), 3, source).size() == 2);  // the row's own token too
  sequence near_end = decoding({5, 6, 7, 8, 9, 5, 6}, 10);         // room for 3 tokens: 2 drafts
  CHECK(lookup.propose(near_end, scope(""), 16, source).size() == 2);
  sequence penalised = decoding({5, 6, 7, 8, 9, 5, 6});
  penalised.req.sampling.presence_penalty = 0.5f;
  CHECK(lookup.propose(penalised, scope(""), 16, source).empty());
  CHECK(source == cache::proposal_source::none);
}

TEST_CASE("prompt lookup: off proposes and stores nothing", "[scheduler]") {
  msg::scheduler_stats stats;
  actors::prompt_lookup_options o = on(1 << 20);
  o.enabled = false;
  prompt_lookup lookup(o, stats);
  sequence s = decoding({5, 6, 7, 8, 9, 5, 6});
  cache::proposal_source source = cache::proposal_source::own;
  CHECK(lookup.propose(s, scope("a"), 16, source).empty());
  CHECK_FALSE(lookup.due(s));
  lookup.store(s, scope("a")());
  CHECK(lookup.cache().find(scope("a")()) == nullptr);
}

TEST_CASE("prompt lookup: a finished request drafts for its tenant's later ones only",
          "[scheduler]") {
  msg::scheduler_stats stats;
  prompt_lookup lookup(on(1 << 20), stats);
  lookup.store(decoding({1, 2, 3, 4, 5, 6, 7, 8}), scope("a")());
  cache::proposal_source source = cache::proposal_source::none;
  sequence later = decoding({9, 3, 4});  // its own history has no earlier "3 4"
  CHECK(lookup.propose(later, scope("a"), 16, source) == std::vector<msg::token_id>{5, 6, 7, 8});
  CHECK(source == cache::proposal_source::shared);
  sequence other = decoding({9, 3, 4});
  CHECK(lookup.propose(other, scope("b"), 16, source).empty());  // another tenant
}

TEST_CASE("prompt lookup: verification is counted by source and adapts the draft length",
          "[scheduler]") {
  msg::scheduler_stats stats;
  prompt_lookup lookup(on(), stats);
  sequence s = decoding({1, 2});
  lookup.verified(s, 4, 4, cache::proposal_source::own);
  lookup.verified(s, 3, 1, cache::proposal_source::shared);
  CHECK(stats.spec_drafts == 2);
  CHECK(stats.spec_drafts_shared == 1);
  CHECK(stats.spec_draft_tokens_own == 4);
  CHECK(stats.spec_accepted_own == 4);
  CHECK(stats.spec_draft_tokens_shared == 3);
  CHECK(stats.spec_accepted_shared == 1);
  CHECK(s.drafts.len == 2);  // what was accepted + 1 after a row where some failed
}

}  // namespace courier_test_actors_scheduler_prompt_lookup
