// How a plan writes one sequence (actors/scheduler/sequence_rows), against the step protocol's
// contract (messages/README.md): block tables as differences to the engine's copy, draw indices
// as output indices, prompt-logprob targets, a start's parameters once, penalty lists.
#include "actors/scheduler/sequence_rows.hpp"

#include <catch2/catch.hpp>

#include <vector>

#include "cache/block_pool.hpp"
#include "cache/block_refs.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_sequence_rows {

using namespace courier;
using actors::make_row;
using actors::make_start;
using actors::penalty_list;
using actors::sequence;

namespace {

sequence prompt_of(std::vector<msg::token_id> prompt) {
  sequence s;
  s.req.id = 7;
  s.req.prompt = prompt;
  s.req.max_tokens = 4;
  s.tokens = prompt;
  s.num_prompt = static_cast<std::int32_t>(prompt.size());
  return s;
}

}  // namespace

TEST_CASE("sequence rows: a block table travels as what changed since the engine's copy",
          "[scheduler]") {
  cache::block_pool pool(16);
  sequence s = prompt_of({1, 2, 3, 4, 5, 6});
  s.blocks = *cache::block_refs::allocate(pool, 2);
  const msg::plan_row first = make_row(s, 4);
  CHECK(first.keep_blocks == 0);
  CHECK(first.new_blocks == std::vector<std::int32_t>{0, 1});
  CHECK(first.tokens == std::vector<msg::token_id>{1, 2, 3, 4});
  CHECK(first.start_pos == 0);
  CHECK_FALSE(first.sample);  // a prompt chunk that is not the last
  s.num_computed = 4;
  s.blocks.append(*cache::block_refs::allocate(pool, 1));
  const msg::plan_row second = make_row(s, 2);
  CHECK(second.keep_blocks == 2);  // the engine has those
  CHECK(second.new_blocks == std::vector<std::int32_t>{2});
  CHECK(second.start_pos == 4);
  CHECK(second.sample);  // the prompt's last token: it samples the first output
  CHECK(second.draw_index == 0);
  s.num_computed = 6;
  CHECK(make_row(s, 0).new_blocks.empty());  // nothing changed since
}

TEST_CASE("sequence rows: a following row feeds a placeholder and draws the next output index",
          "[scheduler]") {
  sequence s = prompt_of({1, 2, 3});
  s.tokens.push_back(40);  // one output known
  s.num_computed = 3;
  s.num_in_flight = 1;     // the row that feeds 40 is in flight and samples output 1
  s.samples_in_flight = 1;
  const msg::plan_row r = make_row(s, 1, true);
  CHECK(r.follows);
  CHECK(r.tokens == std::vector<msg::token_id>{0});
  CHECK(r.start_pos == 4);  // after the prompt (0..2) and 40 (3, in flight)
  CHECK(r.sample);
  CHECK(r.draw_index == 2);  // outputs 0 (known) and 1 (in flight) come before
}

TEST_CASE("sequence rows: prompt logprob targets are the next prompt token, once per position",
          "[scheduler]") {
  sequence s = prompt_of({10, 11, 12, 13});
  s.req.sampling.prompt_logprobs = 0;
  const msg::plan_row a = make_row(s, 2);
  CHECK(a.prompt_targets == std::vector<msg::token_id>{11, 12});
  s.prompt_logprobs.resize(2);  // positions 0 and 1 answered
  s.num_computed = 2;
  const msg::plan_row b = make_row(s, 2);
  // Position 3 is the prompt's last: no prompt token follows it.
  CHECK(b.prompt_targets == std::vector<msg::token_id>{13, msg::no_token});
}

TEST_CASE("sequence rows: a start carries the sampling parameters once and the restore once",
          "[scheduler]") {
  sequence s = prompt_of({1, 2, 2, 3});
  s.req.sampling.temperature = 0.5f;
  s.restore_slot = 9;
  s.state_copied = true;
  const msg::sequence_start first = make_start(s);
  CHECK(first.carries_sampling);
  CHECK(first.sampling.temperature == 0.5f);
  CHECK(first.state_restore == 9);
  CHECK(first.state_copied);
  CHECK(first.penalties.empty());  // not penalised
  CHECK(s.started);
  CHECK(s.restore_slot == -1);
  s.started = false;  // preempted: the next row carries a start again
  const msg::sequence_start again = make_start(s);
  CHECK_FALSE(again.carries_sampling);  // the engine kept them
  CHECK(again.state_restore == -1);
  CHECK_FALSE(again.state_copied);
}

TEST_CASE("sequence rows: a penalty list has each distinct token once, in the prompt or counted",
          "[scheduler]") {
  sequence s = prompt_of({5, 3, 5});
  s.tokens.insert(s.tokens.end(), {3, 9, 9});  // the output so far
  s.req.sampling.presence_penalty = 0.5f;
  const std::vector<msg::penalty_entry> list = penalty_list(s);
  REQUIRE(list.size() == 3);
  CHECK((list[0].token == 3 && list[0].in_prompt && list[0].output_count == 1));
  CHECK((list[1].token == 5 && list[1].in_prompt && list[1].output_count == 0));
  CHECK((list[2].token == 9 && !list[2].in_prompt && list[2].output_count == 2));
  const msg::sequence_start st = make_start(s);
  CHECK(st.penalties.size() == 3);
}

}  // namespace courier_test_actors_scheduler_sequence_rows
