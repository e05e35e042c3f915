// What an answered row does to its sequence (actors/scheduler/row_answers), against its
// contract: fed tokens computed (a row with drafts: its fed token and the drafts that stood), a
// prompt's whole blocks cached at its first token, the blocks of rejected drafts given back,
// tokens taken up to the first that ends the request (an EOS or stop token id included, as
// OpenAI's finish_reason "stop"; max_tokens as "length"), and the engine's failures passed on.
#include "actors/scheduler/row_answers.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_row_answers {

using namespace courier;
using actors::fed_row;
using actors::row_outcome;
using actors::seq_state;
using actors::sequence;

namespace {

constexpr std::int32_t kBlock = 4;
constexpr msg::token_id kEos = 2;

std::vector<msg::token_id> tokens(int n, int first = 100) {
  std::vector<msg::token_id> t;
  for (int i = 0; i < n; ++i) t.push_back(first + i);
  return t;
}

msg::engine_ready ready_with_eos() {
  msg::engine_ready r;
  r.eos_token_ids = {kEos};
  return r;
}

// A pool of 16 device blocks of 4 tokens with prefix caching, and the pieces rows count into.
struct rig {
  rig()
      : ready(ready_with_eos()),
        kv(16, kBlock, true),
        snaps(kv, stats, 0, false),
        lookup(actors::prompt_lookup_options{}, stats),
        answers(kv, snaps, lookup, stats, ready, false,
                [](const sequence&) { return actors::prefix_namespace{}; },
                [this] { return clock += 5; }) {}

  // A sequence admitted with `prompt` (max_tokens new tokens), holding blocks for all of it.
  sequence admitted(std::vector<msg::token_id> prompt, std::int32_t max_tokens) {
    sequence s;
    s.req.id = 1;
    s.req.prompt = prompt;
    s.req.max_tokens = max_tokens;
    s.tokens = prompt;
    s.num_prompt = static_cast<std::int32_t>(prompt.size());
    s.max_total = s.num_prompt + max_tokens;
    s.state = seq_state::prefilling;
    auto blocks = kv.allocate((s.num_prompt + kBlock - 1) / kBlock);
    REQUIRE(blocks);
    s.blocks.append(std::move(*blocks));
    return s;
  }

  std::int32_t cached(const std::vector<msg::token_id>& prompt) {
    return kv.peek({}, prompt, static_cast<std::int32_t>(prompt.size()));
  }

  std::int64_t clock = 1000;
  msg::scheduler_stats stats;
  msg::engine_ready ready;
  actors::kv_manager kv;
  actors::hybrid_snapshots snaps;
  actors::prompt_lookup lookup;
  actors::row_answers answers;
};

fed_row fed(std::int32_t n, bool sample, std::int32_t drafts = 0) {
  fed_row f;
  f.seq = 1;
  f.num_tokens = n + drafts;
  f.sample = sample;
  f.num_drafts = drafts;
  return f;
}

msg::row_result sampled(std::vector<msg::token_id> t) {
  msg::row_result r;
  r.tokens = std::move(t);
  return r;
}

}  // namespace

TEST_CASE("row answers: a prompt chunk computes its tokens; the first token caches the prompt",
          "[scheduler]") {
  rig r;
  const std::vector<msg::token_id> prompt = tokens(10);  // 2 whole blocks and 2 tokens
  sequence s = r.admitted(prompt, 4);
  // The first chunk, 6 tokens, samples nothing.
  row_outcome o = r.answers.answer(s, fed(6, false), nullptr);
  CHECK(o.what == row_outcome::kind::nothing);
  CHECK(s.num_computed == 6);
  CHECK(r.stats.prefilled_tokens == 6);
  CHECK(r.cached(prompt) == 0);  // nothing cached before the prompt is done
  // The rest samples the first token: decoding, the 2 whole blocks cached, the token taken.
  msg::row_result res = sampled({500});
  o = r.answers.answer(s, fed(4, true), &res);
  CHECK(o.what == row_outcome::kind::tokens);
  CHECK(o.tokens == std::vector<msg::token_id>{500});
  CHECK(s.state == seq_state::decoding);
  CHECK(s.num_computed == 10);
  CHECK(r.stats.prefilled_tokens == 10);
  CHECK(r.stats.generated_tokens == 1);
  CHECK(s.tokens.size() == 11);
  CHECK(s.tokens.back() == 500);
  CHECK(s.num_in_cache == 8);
  CHECK(r.cached(prompt) == 8);
  CHECK(s.timing.first_token_ns == r.clock);
}

TEST_CASE("row answers: drafts that stood are computed, rejected ones give back their blocks",
          "[scheduler]") {
  rig r;
  sequence s = r.admitted(tokens(7), 20);  // 2 blocks
  msg::row_result first = sampled({500});
  REQUIRE(r.answers.answer(s, fed(7, true), &first).what == row_outcome::kind::tokens);
  REQUIRE(s.num_computed == 7);
  // Token 500 fed at position 7 with 4 drafts (positions 8..11): 12 tokens, 3 blocks.
  auto more = r.kv.allocate(1);
  REQUIRE(more);
  s.blocks.append(std::move(*more));
  msg::scheduler_stats before;
  r.kv.count(before);
  SECTION("one stands: the fed token and that draft computed, the token after it taken") {
    msg::row_result res = sampled({600, 601});
    row_outcome o = r.answers.answer(s, fed(1, true, 4), &res);
    CHECK(o.what == row_outcome::kind::tokens);
    CHECK(o.tokens == std::vector<msg::token_id>{600, 601});
    CHECK(s.num_computed == 9);
    CHECK(s.blocks.size() == 3);  // 9 tokens in 3 blocks
  }
  SECTION("none stands: the third block held only drafts, and goes back") {
    msg::row_result res = sampled({600});
    row_outcome o = r.answers.answer(s, fed(1, true, 4), &res);
    CHECK(o.what == row_outcome::kind::tokens);
    CHECK(o.tokens == std::vector<msg::token_id>{600});
    CHECK(s.num_computed == 8);
    CHECK(s.blocks.size() == 2);
    msg::scheduler_stats after;
    r.kv.count(after);
    CHECK(after.num_free_blocks == before.num_free_blocks + 1);
  }
}

TEST_CASE("row answers: tokens end the request at an EOS or stop id (included) or max_tokens",
          "[scheduler]") {
  SECTION("EOS among accepted drafts: the tokens after it are dropped") {
    rig r;
    sequence s = r.admitted(tokens(4), 10);
    msg::row_result res = sampled({500, kEos, 502});
    row_outcome o = r.answers.answer(s, fed(4, true), &res);
    CHECK(o.what == row_outcome::kind::finished);
    CHECK(o.why == msg::finish_reason::stop);
    CHECK(o.tokens == std::vector<msg::token_id>{500, kEos});
    CHECK(r.stats.num_finished == 1);
  }
  SECTION("ignore_eos: EOS is a token like any other; a stop token id still stops") {
    rig r;
    sequence s = r.admitted(tokens(4), 10);
    s.req.ignore_eos = true;
    s.req.stop_token_ids = {77};
    msg::row_result res = sampled({kEos, 77, 9});
    row_outcome o = r.answers.answer(s, fed(4, true), &res);
    CHECK(o.what == row_outcome::kind::finished);
    CHECK(o.why == msg::finish_reason::stop);
    CHECK(o.tokens == std::vector<msg::token_id>{kEos, 77});
  }
  SECTION("max_tokens reached: length, logprobs cut to the tokens taken") {
    rig r;
    sequence s = r.admitted(tokens(4), 2);
    msg::row_result res = sampled({500, 501, 502});
    res.logprobs.resize(3);
    row_outcome o = r.answers.answer(s, fed(4, true), &res);
    CHECK(o.what == row_outcome::kind::finished);
    CHECK(o.why == msg::finish_reason::length);
    CHECK(o.tokens == std::vector<msg::token_id>{500, 501});
    CHECK(o.logprobs.size() == 2);
  }
  SECTION("a scored prompt (max_tokens 0) ends by length once all of it is computed") {
    rig r;
    sequence s = r.admitted(tokens(8), 0);
    CHECK(r.answers.answer(s, fed(5, false), nullptr).what == row_outcome::kind::nothing);
    row_outcome o = r.answers.answer(s, fed(3, false), nullptr);
    CHECK(o.what == row_outcome::kind::finished);
    CHECK(o.why == msg::finish_reason::length);
    CHECK(o.tokens.empty());
  }
}

TEST_CASE("row answers: the engine's failures end the request with its code and message",
          "[scheduler]") {
  rig r;
  sequence s = r.admitted(tokens(4), 10);
  msg::row_result bad;
  bad.error = msg::error_code::invalid_request;
  bad.message = "grammar rejected every token";
  row_outcome o = r.answers.answer(s, fed(4, true), &bad);
  CHECK(o.what == row_outcome::kind::failed);
  CHECK(o.code == msg::error_code::invalid_request);
  CHECK(o.message == "grammar rejected every token");
  sequence t = r.admitted(tokens(4, 300), 10);
  o = r.answers.answer(t, fed(4, true), nullptr);
  CHECK(o.what == row_outcome::kind::failed);
  CHECK(o.code == msg::error_code::engine_failure);
  // More drafts accepted than were sent: the engine is wrong, not the request.
  sequence u = r.admitted(tokens(4, 600), 10);
  msg::row_result first = sampled({1});
  REQUIRE(r.answers.answer(u, fed(4, true), &first).what == row_outcome::kind::tokens);
  msg::row_result many = sampled({5, 6, 7});
  o = r.answers.answer(u, fed(1, true, 1), &many);
  CHECK(o.what == row_outcome::kind::failed);
  CHECK(o.code == msg::error_code::engine_failure);
}

}  // namespace courier_test_actors_scheduler_row_answers
