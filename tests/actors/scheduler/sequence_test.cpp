// One request's record (actors/scheduler/sequence): how a submit becomes a sequence (OpenAI's
// max_tokens counts output only and the model's context bounds the whole; an unseeded request
// gets a seed from splitmix64's stream, whose published first output from state 0 is
// 0xe220a8397b1dcdaf), what a preempted one forgets, and what each state may hold
// (check_holdings, the lifecycle diagram's contract).
#include "actors/scheduler/sequence.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include "cache/block_pool.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_sequence {

using namespace courier;
using actors::check_holdings;
using actors::seq_state;
using actors::sequence;

namespace {

msg::submit submit_of(msg::request_id id, std::int32_t prompt_len, std::int32_t max_tokens) {
  msg::submit s;
  s.id = id;
  s.prompt.assign(static_cast<std::size_t>(prompt_len), 3);
  s.max_tokens = max_tokens;
  return s;
}

}  // namespace

TEST_CASE("sequence: a submit becomes a waiting sequence with its limits, group and seed",
          "[scheduler]") {
  std::uint64_t seeds = 0;
  auto s = actors::make_sequence(submit_of(7, 10, 20), seeds, 100, 5'000);
  CHECK(s->state == seq_state::waiting);
  CHECK(s->tokens.size() == 10);
  CHECK(s->num_prompt == 10);
  CHECK(s->max_total == 30);  // prompt + max_tokens
  CHECK(s->req.group == 7);   // its own group
  CHECK(s->timing.arrival_ns == 5'000);
  CHECK(s->req.sampling.has_seed);
  CHECK(s->req.sampling.seed == 0xe220a8397b1dcdafULL);
  // The model's context bounds prompt and output together; a seed and a group are kept, and
  // a seeded request draws nothing from the stream.
  msg::submit seeded = submit_of(8, 90, 20);
  seeded.sampling.seed = 42;
  seeded.sampling.has_seed = true;
  seeded.group = 3;
  seeded.arrival_ns = 1'000;
  const std::uint64_t before = seeds;
  auto t = actors::make_sequence(seeded, seeds, 100, 5'000);
  CHECK(t->max_total == 100);
  CHECK(t->req.sampling.seed == 42);
  CHECK(t->req.group == 3);
  CHECK(t->timing.arrival_ns == 1'000);
  CHECK(seeds == before);
}

TEST_CASE("sequence: a preempted sequence waits with nothing computed, its old rows void",
          "[scheduler]") {
  actors::state_pool states(2);
  std::uint64_t seeds = 0;
  auto s = actors::make_sequence(submit_of(1, 4, 4), seeds, 100, 0);
  s->state = seq_state::decoding;
  s->recurrent = *states.take();
  s->num_computed = 5;
  s->num_in_cache = 4;
  s->num_in_flight = 1;
  s->samples_in_flight = 1;
  s->started = true;
  const std::uint32_t epoch = s->epoch;
  s->requeue();
  CHECK(s->state == seq_state::waiting);
  CHECK(s->next_pos() == 0);
  CHECK(s->num_in_cache == 0);
  CHECK(s->samples_in_flight == 0);
  CHECK_FALSE(s->started);
  CHECK(s->recurrent.index() < 0);
  CHECK(states.num_free() == 2);  // its slot went back
  CHECK(s->epoch == epoch + 1);
  CHECK(s->tokens.size() == 4);  // what it emitted stays: it is recomputed, not restarted
}

TEST_CASE("sequence: each state holds only what it may", "[scheduler]") {
  cache::block_pool pool(8);
  std::uint64_t seeds = 0;
  auto s = actors::make_sequence(submit_of(1, 6, 4), seeds, 100, 0);
  check_holdings(*s, 4, false, 0);  // waiting, holding nothing
  s->blocks = *cache::block_refs::allocate(pool, 2);
  CHECK_THROWS_AS(check_holdings(*s, 4, false, 0), std::logic_error);  // waiting with blocks
  s->state = seq_state::prefilling;
  s->num_computed = 4;
  s->num_in_flight = 2;
  check_holdings(*s, 4, false, 1);  // 8 tokens of blocks cover 6 computed or in flight
  s->num_in_flight = 5;
  CHECK_THROWS_AS(check_holdings(*s, 4, false, 1), std::logic_error);  // 9 > 8
  s->num_in_flight = 2;
  s->samples_in_flight = 2;
  CHECK_THROWS_AS(check_holdings(*s, 4, false, 1), std::logic_error);  // more than the steps
  s->samples_in_flight = 1;
  s->copy_batch = 3;  // a copy batch outside copying_in
  CHECK_THROWS_AS(check_holdings(*s, 4, false, 1), std::logic_error);
  s->state = seq_state::copying_in;
  CHECK_THROWS_AS(check_holdings(*s, 4, false, 1), std::logic_error);  // ... with rows
  s->num_in_flight = s->samples_in_flight = 0;
  check_holdings(*s, 4, false, 1);
  // Swapped out: host blocks exactly for its swapped tokens, a hybrid's with its state row.
  auto w = actors::make_sequence(submit_of(2, 6, 4), seeds, 100, 0);
  w->swapped = *cache::block_refs::allocate(pool, 2);
  w->swapped_tokens = 5;
  check_holdings(*w, 4, false, 0);
  CHECK_THROWS_AS(check_holdings(*w, 4, true, 0), std::logic_error);  // no state row
  w->swapped_tokens = 9;
  CHECK_THROWS_AS(check_holdings(*w, 4, false, 0), std::logic_error);  // 3 blocks' worth
  w->swapped_tokens = 5;
  w->state = seq_state::loading;
  CHECK_THROWS_AS(check_holdings(*w, 4, false, 0), std::logic_error);  // loading holds nothing
}

}  // namespace courier_test_actors_scheduler_sequence
