// Prompt lookup in the scheduler's policy, against fake models whose next token is a known
// function of (sequence, position): drafts may only change how many steps a request takes,
// never its tokens; rejected drafts give their blocks back.
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <random>

#include "actors/scheduler/scheduler_core.hpp"
#include "cache/ngram_proposer.hpp"
#include "tests/support/scheduler_core_driver.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_prompt_lookup_core {

using namespace courier;
using actors::outgoing_event;
using actors::scheduler_core;
using actors::scheduler_options;

namespace {

using model_fn = std::function<msg::token_id(msg::request_id, std::int32_t)>;

struct driver : test::core_events {
  scheduler_core core;
  test::engine_tables_check engine_tables;
  model_fn next;
  int steps = 0;
  int max_drafts_in_a_row = 0;

  driver(scheduler_options o, msg::engine_ready r, model_fn f) : core(o, r), next(std::move(f)) {}

  void submit(msg::submit s) {
    std::vector<outgoing_event> out;
    core.submit(std::move(s), out);
    take(out);
  }
  // Until idle; invariants after every step (they include: with no step in flight, each
  // running sequence holds exactly the blocks its computed tokens need).
  void run() {
    std::vector<outgoing_event> out;
    for (;;) {
      auto plan = core.plan(out);
      take(out);
      if (!plan) return;
      ++steps;
      for (const auto& row : plan->rows) {
        max_drafts_in_a_row = std::max(max_drafts_in_a_row, row.num_drafts);
      }
      core.check_invariants();
      engine_tables.on_plan(*plan, core);  // rejected drafts give blocks back: differences shrink
      core.on_result(test::verify_drafts(*plan, next), out);
      take(out);
      core.check_invariants();
    }
  }
};

// A prompt that repeats a 7-token pattern, so the request's own history always has a match.
msg::submit periodic_request(msg::request_id id, int prompt_len, int max_tokens) {
  msg::submit s;
  s.id = id;
  for (int i = 0; i < prompt_len; ++i) s.prompt.push_back(static_cast<msg::token_id>(10 + i % 7));
  s.max_tokens = max_tokens;
  s.ignore_eos = true;
  return s;
}

// Continues the prompts' pattern: own-history drafts are right.
msg::token_id periodic_model(msg::request_id, std::int32_t pos) {
  return static_cast<msg::token_id>(10 + pos % 7);
}
// Tokens from {10, 11, 12} by a hash of the position: two-token suffixes keep recurring, and
// what followed them last time is right about a third of the time.
msg::token_id scrambled_model(msg::request_id s, std::int32_t pos) {
  std::uint64_t z = s * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(pos);
  z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ULL;
  return static_cast<msg::token_id>(10 + (z ^ (z >> 29)) % 3);
}

// Always continues differently from what the proposer would draft: every draft is rejected.
struct adversarial_model {
  std::vector<msg::token_id> text;  // prompt, then the model's tokens
  cache::ngram_proposer proposer{{2, 4, 16}};
  msg::token_id operator()(msg::request_id, std::int32_t pos) {
    while (static_cast<std::int32_t>(text.size()) <= pos) {
      const auto draft = proposer.propose(cache::token_span(text), 1);
      msg::token_id t = 10;
      while (!draft.empty() && t == draft[0]) ++t;
      text.push_back(t);
    }
    return text[static_cast<std::size_t>(pos)];
  }
};

scheduler_options lookup_on(int num_draft = 4) {
  scheduler_options o;
  o.lookup.enabled = true;
  o.lookup.num_draft = num_draft;
  o.lookup.shared.ngram.min_n = 2;
  o.lookup.shared.ngram.max_n = 4;
  return o;
}

std::vector<msg::token_id> expected(const model_fn& f, msg::request_id id, int prompt_len, int n) {
  std::vector<msg::token_id> v;
  for (int i = 0; i < n; ++i) v.push_back(f(id, prompt_len + i));
  return v;
}

}  // namespace

TEST_CASE("prompt lookup core: accepted drafts save steps and change no token", "[scheduler]") {
  driver off(scheduler_options{}, test::fake_engine_ready(200), periodic_model);
  driver on(lookup_on(), test::fake_engine_ready(200), periodic_model);
  for (msg::request_id id = 1; id <= 8; ++id) {
    off.submit(periodic_request(id, 20 + static_cast<int>(id), 60));
    on.submit(periodic_request(id, 20 + static_cast<int>(id), 60));
  }
  off.run();
  on.run();
  for (msg::request_id id = 1; id <= 8; ++id) {
    const auto want = expected(periodic_model, id, 20 + static_cast<int>(id), 60);
    CHECK(off.tokens[id] == want);
    CHECK(on.tokens[id] == want);
    CHECK(on.last[id].use.completion_tokens == 60);
  }
  const auto st = on.core.stats();
  CHECK(st.spec_accepted_own == st.spec_draft_tokens_own);  // the pattern never breaks
  CHECK(st.spec_draft_tokens_shared == 0);                   // no tenant: no shared scope
  CHECK(on.max_drafts_in_a_row == 4);
  // 59 decode tokens per request; each step gives up to 5 of them.
  CHECK(on.steps * 3 < off.steps);
  on.core.evict_all_cached();
  CHECK(on.core.stats().num_free_blocks == 200);
}

TEST_CASE("prompt lookup core: rejected drafts roll back and every block comes back",
          "[scheduler]") {
  for (int blocks : {14, 300}) {
    INFO(blocks << " blocks");
    driver on(lookup_on(8), test::fake_engine_ready(blocks), scrambled_model);
    std::mt19937 rng(static_cast<unsigned>(blocks));
    std::map<msg::request_id, std::pair<int, int>> shape;
    for (msg::request_id id = 1; id <= 24; ++id) {
      const int len = 8 + static_cast<int>(rng() % 60), out = 1 + static_cast<int>(rng() % 90);
      shape[id] = {len, out};
      on.submit(periodic_request(id, len, out));
    }
    on.run();
    for (const auto& [id, lo] : shape) {
      CHECK(on.tokens[id] == expected(scrambled_model, id, lo.first, lo.second));
    }
    const auto st = on.core.stats();
    INFO("drafts " << st.spec_draft_tokens_own << ", accepted " << st.spec_accepted_own);
    CHECK(st.spec_draft_tokens_own > 100);
    CHECK(st.spec_accepted_own > 0);
    CHECK(st.spec_accepted_own < st.spec_draft_tokens_own / 2);
    if (blocks == 14) CHECK(st.num_preemptions > 0);
    on.core.evict_all_cached();
    CHECK(on.core.stats().num_free_blocks == blocks);
  }
}

TEST_CASE("prompt lookup core: drafts back off when they keep failing", "[scheduler]") {
  auto model = std::make_shared<adversarial_model>();
  const msg::submit s = periodic_request(1, 30, 400);
  model->text = s.prompt;
  driver on(lookup_on(8), test::fake_engine_ready(400),
            [model](msg::request_id id, std::int32_t pos) { return (*model)(id, pos); });
  on.submit(s);
  on.run();
  const auto st = on.core.stats();
  // 399 decode steps; after k misses in a row a request waits 2^k - 1 steps (at most 31), so a
  // never-right proposer drafts on a small fraction of them.
  INFO("rows with drafts: " << st.spec_drafts);
  CHECK(st.spec_drafts > 5);
  CHECK(st.spec_drafts < 40);
  CHECK(st.spec_accepted_own == 0);
  CHECK(on.tokens[1] == std::vector<msg::token_id>(model->text.begin() + 30, model->text.end()));
}

TEST_CASE("prompt lookup core: an end token among accepted drafts ends the request there",
          "[scheduler]") {
  // The pattern continues 10..16 and then gives EOS at position 50.
  auto model = [](msg::request_id, std::int32_t pos) -> msg::token_id {
    return pos == 50 ? 999 : static_cast<msg::token_id>(10 + pos % 7);
  };
  driver on(lookup_on(8), test::fake_engine_ready(100), model);
  auto s = periodic_request(1, 21, 100);
  s.ignore_eos = false;
  on.submit(s);
  s.id = 2;
  s.max_tokens = 23;  // ends by length inside a run of accepted drafts
  on.submit(s);
  s.id = 3;
  s.max_tokens = 100;
  s.stop_token_ids = {13};  // a stop id that a draft proposes
  on.submit(s);
  on.run();
  CHECK(on.tokens[1] == expected(model, 1, 21, 30));  // positions 21..50, EOS included
  CHECK(on.last[1].finish == msg::finish_reason::stop);
  CHECK(on.tokens[2] == expected(model, 2, 21, 23));
  CHECK(on.last[2].finish == msg::finish_reason::length);
  const auto first13 = expected(model, 3, 21, 100);
  const auto stop_at = std::find(first13.begin(), first13.end(), 13) - first13.begin() + 1;
  CHECK(on.tokens[3] == std::vector<msg::token_id>(first13.begin(), first13.begin() + stop_at));
  CHECK(on.core.stats().spec_accepted_own > 0);
}

TEST_CASE("prompt lookup core: a small token budget limits the drafts of a row",
          "[scheduler]") {
  auto o = lookup_on(8);
  o.max_batched_tokens = 3;
  driver on(o, test::fake_engine_ready(200), periodic_model);
  on.submit(periodic_request(1, 30, 40));
  on.run();
  CHECK(on.tokens[1] == expected(periodic_model, 1, 30, 40));
  CHECK(on.max_drafts_in_a_row == 2);  // 1 + 2 tokens = the budget
}

}  // namespace courier_test_actors_scheduler_prompt_lookup_core
