// What the scheduler tells a client (actors/scheduler/sequence_events), against the documented
// behaviour: a stop token ends a request with finish_reason "stop" and is its last token
// (vLLM's stop_token_ids, OpenAI's finish_reason), ignore_eos ignores only the EOS ids, the
// length limit counts prompt plus output (max_total), logprobs go only to a request that asked
// for them (OpenAI: `logprobs` off means none), the prompt's once (vLLM's prompt_logprobs come
// with the first output), usage counts prompt, completion and cached tokens.
#include "actors/scheduler/sequence_events.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

#include <vector>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_sequence_events {

using namespace courier;
using actors::sequence;

namespace {

constexpr msg::token_id eos = 2;

// A request for prompt {10, 11, 12} that may reach `max_total` tokens, `out` emitted so far.
sequence request(std::int32_t max_total, std::vector<msg::token_id> out = {}) {
  sequence s;
  s.req.id = 5;
  s.req.prompt = {10, 11, 12};
  s.tokens = s.req.prompt;
  s.num_prompt = 3;
  s.max_total = max_total;
  s.tokens.insert(s.tokens.end(), out.begin(), out.end());
  return s;
}

msg::token_logprob logprob(msg::token_id t, float v) {
  msg::token_logprob l;
  l.token = t;
  l.logprob = v;
  return l;
}

}  // namespace

TEST_CASE("sequence events: an EOS or stop token ends the request with it, later ones dropped",
          "[scheduler]") {
  sequence s = request(100);
  // Accepted drafts past the end are not the request's: it ends at EOS, which is its last.
  auto t = actors::take_tokens(s, {20, eos, 21}, {eos});
  CHECK(t.count == 2);
  CHECK(t.why == msg::finish_reason::stop);
  s.req.stop_token_ids = {21};
  t = actors::take_tokens(s, {20, 21, 22}, {eos});
  CHECK(t.count == 2);
  CHECK(t.why == msg::finish_reason::stop);
  t = actors::take_tokens(s, {20, 22}, {eos});  // neither: all taken, it goes on
  CHECK(t.count == 2);
  CHECK(t.why == msg::finish_reason::none);
}

// min_tokens bans exactly the tokens take_tokens would end at: each once.
TEST_CASE("sequence events: the end tokens are the EOS ids unless ignore_eos, and the stop ids",
          "[scheduler]") {
  msg::submit s;
  s.stop_token_ids = {21, 7, 21};
  const std::vector<msg::token_id> eos_ids = {7, 9};
  CHECK(actors::end_tokens_of(s, eos_ids) == std::vector<msg::token_id>{7, 9, 21});
  s.ignore_eos = true;
  CHECK(actors::end_tokens_of(s, eos_ids) == std::vector<msg::token_id>{21, 7});
  s.stop_token_ids.clear();
  CHECK(actors::end_tokens_of(s, eos_ids).empty());
  // Each one ends a sequence with the same request, and nothing else does.
  s.ignore_eos = false;
  s.stop_token_ids = {21};
  sequence q = request(100);
  q.req.stop_token_ids = s.stop_token_ids;
  for (msg::token_id t = 0; t < 40; ++t) {
    const std::vector<msg::token_id> ends = actors::end_tokens_of(s, eos_ids);
    const bool ends_it = std::find(ends.begin(), ends.end(), t) != ends.end();
    CHECK((actors::take_tokens(q, {t}, eos_ids).why == msg::finish_reason::stop) == ends_it);
  }
}

TEST_CASE("sequence events: ignore_eos ignores the EOS ids but not the stop token ids",
          "[scheduler]") {
  sequence s = request(100);
  s.req.ignore_eos = true;
  auto t = actors::take_tokens(s, {eos, eos, 20}, {eos});
  CHECK(t.count == 3);
  CHECK(t.why == msg::finish_reason::none);
  s.req.stop_token_ids = {eos};  // named as a stop token, it stops
  t = actors::take_tokens(s, {20, eos, 21}, {eos});
  CHECK(t.count == 2);
  CHECK(t.why == msg::finish_reason::stop);
}

TEST_CASE("sequence events: the length limit counts prompt and output, a stop at it is a stop",
          "[scheduler]") {
  sequence s = request(6, {20});  // 4 tokens: two more reach the limit
  auto t = actors::take_tokens(s, {21, 22, 23}, {eos});
  CHECK(t.count == 2);
  CHECK(t.why == msg::finish_reason::length);
  t = actors::take_tokens(s, {21, eos}, {eos});  // both ends at once: the stop token says why
  CHECK(t.count == 2);
  CHECK(t.why == msg::finish_reason::stop);
  t = actors::take_tokens(s, {}, {eos});
  CHECK(t.count == 0);
  CHECK(t.why == msg::finish_reason::none);
}

TEST_CASE("sequence events: logprobs only when asked, the prompt's once, usage so far",
          "[scheduler]") {
  sequence s = request(100, {20, 21});
  s.cached_tokens = 2;
  msg::token_event e =
      actors::tokens_event(s, {22}, {logprob(22, -0.5f)}, msg::finish_reason::none);
  CHECK(e.id == 5);
  CHECK(e.tokens == std::vector<msg::token_id>{22});
  CHECK(e.logprobs.empty());  // logprobs -1: not asked for
  CHECK(e.use.prompt_tokens == 3);
  CHECK(e.use.completion_tokens == 2);
  CHECK(e.use.cached_tokens == 2);
  s.req.sampling.logprobs = 0;  // asked for: the sampled token's own
  s.req.sampling.prompt_logprobs = 0;
  s.prompt_logprobs = {logprob(10, 0.0f), logprob(11, -1.0f), logprob(12, -2.0f)};
  e = actors::tokens_event(s, {22}, {logprob(22, -0.5f)}, msg::finish_reason::length);
  REQUIRE(e.logprobs.size() == 1);
  CHECK(e.logprobs[0].logprob == -0.5f);
  CHECK(e.prompt_logprobs.size() == 3);
  CHECK(e.finish == msg::finish_reason::length);
  CHECK(s.prompt_logprobs_sent);
  e = actors::tokens_event(s, {23}, {logprob(23, -0.25f)}, msg::finish_reason::none);
  CHECK(e.prompt_logprobs.empty());  // sent once
}

TEST_CASE("sequence events: a failure and a refusal end the request with an error and usage",
          "[scheduler]") {
  sequence s = request(100, {20});
  const msg::token_event e =
      actors::error_event(s, msg::error_code::engine_failure, "the engine failed a step");
  CHECK(e.finish == msg::finish_reason::error);
  CHECK(e.error == msg::error_code::engine_failure);
  CHECK(e.message == "the engine failed a step");
  CHECK(e.use.prompt_tokens == 3);
  CHECK(e.use.completion_tokens == 1);
  CHECK(e.tokens.empty());

  msg::submit r;
  r.id = 9;
  r.prompt = {1, 2, 3, 4};
  r.arrival_ns = 1'000'000'000;
  const msg::token_event refused = actors::refusal_event(r, msg::error_code::overloaded, "full");
  CHECK(refused.id == 9);
  CHECK(refused.finish == msg::finish_reason::error);
  CHECK(refused.error == msg::error_code::overloaded);
  CHECK(refused.use.prompt_tokens == 4);
  CHECK(refused.use.completion_tokens == 0);
  const msg::request_summary q =
      actors::refusal_summary(r, msg::error_code::overloaded, 1'500'000'000);
  CHECK(q.finish == msg::finish_reason::error);
  CHECK(q.prompt_tokens == 4);
  CHECK(q.e2e_s == Approx(0.5));
  CHECK(q.ttft_s < 0);  // never reached
}

TEST_CASE("sequence events: a summary counts its tokens and moves its latencies", "[scheduler]") {
  sequence s = request(100, {20, 21});
  s.cached_tokens = 1;
  s.req.adapter = "sql";
  s.timing.arrival_ns = 1'000;
  s.timing.scheduled_ns = 3'000;
  s.timing.tokens_at(7'000);
  s.timing.tokens_at(9'000);
  const msg::request_summary q =
      actors::summary_of(s, msg::finish_reason::stop, msg::error_code::none, 10'000);
  CHECK(q.finish == msg::finish_reason::stop);
  CHECK(q.prompt_tokens == 3);
  CHECK(q.generation_tokens == 2);
  CHECK(q.cached_tokens == 1);
  CHECK(q.adapter == "sql");
  CHECK(q.ttft_s == Approx(6e-6));
  CHECK(q.e2e_s == Approx(9e-6));
  CHECK(q.inter_token_s.size() == 1);
}

}  // namespace courier_test_actors_scheduler_sequence_events
