// The engine's record of each running sequence: a start makes it (slot, sampling parameters,
// penalty list), each row's table difference keeps a prefix of its table and appends; a
// following row reads, on the device, its sequence's next token, which the plan launched just
// before wrote after sampling, else it does not run; the table kept in the slot is written
// only past the entries known to be on the device; preemption resets the device state and
// keeps the parameters, the end forgets everything; protocol errors are named.
#include <catch2/catch.hpp>

#include "actors/engine/sequence_table.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_engine_sequence_table {

using namespace courier;
using table = std::vector<std::int32_t>;

namespace {

msg::sequence_start start(msg::request_id seq, bool carries = true) {
  msg::sequence_start s;
  s.seq = seq;
  s.carries_sampling = carries;
  return s;
}

msg::plan_row row(msg::request_id seq, bool follows, std::int32_t drafts = 0,
                  bool sample = true) {
  msg::plan_row r;
  r.seq = seq;
  r.tokens = std::vector<msg::token_id>(static_cast<std::size_t>(1 + drafts), 0);
  r.num_drafts = drafts;
  r.follows = follows;
  r.sample = sample;
  return r;
}

msg::plan_row table_row(msg::request_id seq, std::int32_t keep, table blocks) {
  msg::plan_row r = row(seq, false, 0, false);
  r.keep_blocks = keep;
  r.new_blocks = std::move(blocks);
  return r;
}

// Applies and resolves a plan that must be well formed.
std::vector<actors::row_use> resolved(actors::sequence_table& t, const msg::step_plan& p) {
  const std::optional<std::string> error = t.apply(p);
  INFO(error.value_or(""));
  REQUIRE_FALSE(error);
  return t.resolve(p);
}

}  // namespace

TEST_CASE("sequence table: a row's difference keeps a prefix of the table and appends",
          "[engine]") {
  actors::sequence_table t(4);
  auto apply = [&](const msg::plan_row& r, std::vector<msg::sequence_start> starts = {}) {
    resolved(t, msg::step_plan{1, {r}, std::move(starts)});
    return t.find(r.seq)->table;
  };
  CHECK(apply(table_row(1, 0, {4, 9}), {start(1)}) == table{4, 9});  // first row: whole
  CHECK(apply(table_row(1, 2, {})) == table{4, 9});        // most decode steps: nothing new
  CHECK(apply(table_row(1, 2, {11})) == table{4, 9, 11});  // a new block
  CHECK(apply(table_row(1, 1, {3, 5})) == table{4, 3, 5});  // drafts rejected, blocks changed
  CHECK(apply(table_row(2, 0, {7}), {start(2)}) == table{7});  // sequences are apart
  CHECK(apply(table_row(1, 0, {8})) == table{8});  // replaced
  CHECK(t.size() == 2);
}

TEST_CASE("sequence table: protocol errors are named, and everything else is applied",
          "[engine]") {
  actors::sequence_table t(4);
  resolved(t, msg::step_plan{1, {table_row(1, 0, {4, 9})}, {start(1)}});
  // Keeping more than the record holds, or a negative count: refused, the table as it was.
  auto error = t.apply(msg::step_plan{2, {table_row(1, 3, {1}), table_row(2, 0, {6})},
                                      {start(2)}});
  REQUIRE(error);
  CHECK_THAT(*error, Catch::Contains("keeps 3 blocks of its table, the engine holds 2"));
  CHECK(t.find(1)->table == table{4, 9});
  CHECK(t.find(2)->table == table{6});  // the rest of the plan was applied
  CHECK(t.apply(msg::step_plan{3, {table_row(1, -1, {})}}));
  CHECK(t.find(1)->table == table{4, 9});
  // A row of a sequence that has no start.
  error = t.apply(msg::step_plan{4, {table_row(5, 0, {1})}});
  REQUIRE(error);
  CHECK_THAT(*error, Catch::Contains("sequence 5 has a row and no start"));
  CHECK(t.find(5) == nullptr);
  // A sampling row whose parameters no start carried.
  error = t.apply(msg::step_plan{5, {row(6, false)}, {start(6, false)}});
  REQUIRE(error);
  CHECK_THAT(*error, Catch::Contains("no start has carried its sampling parameters"));
}

TEST_CASE("sequence table: parameters sent once serve every later row, the bias kept apart; "
          "preemption keeps them, the end forgets them",
          "[engine]") {
  actors::sequence_table t(4);
  msg::sequence_start s = start(1);
  s.sampling.temperature = 0.7f;
  s.sampling.top_k = 40;
  s.sampling.logit_bias_tokens = {5, 9};
  s.sampling.logit_bias_values = {2.0f, -100.0f};
  s.penalties = {{3, 1, true}};
  resolved(t, msg::step_plan{1, {row(1, false)}, {s}});
  const actors::sequence_record* r = t.find(1);
  REQUIRE(r);
  CHECK(r->has_sampling);
  CHECK(r->sampling.temperature == 0.7f);
  CHECK(r->sampling.top_k == 40);
  CHECK(r->sampling.logit_bias_tokens.empty());  // the bias is kept apart, not in the params
  CHECK(r->bias_tokens == std::vector<msg::token_id>{5, 9});
  CHECK(r->bias_values == std::vector<float>{2.0f, -100.0f});
  CHECK(r->start.sampling.logit_bias_tokens.empty());  // and not kept twice
  REQUIRE(r->start.penalties.size() == 1);
  // Preempted: the device state goes (slot, table, penalty list), the parameters stay; its
  // next start carries none, and its rows sample with the kept ones.
  msg::step_plan p{2, {}};
  p.preempted = {1};
  resolved(t, p);
  r = t.find(1);
  REQUIRE(r);
  CHECK(r->slot == -1);
  CHECK(r->start.penalties.empty());
  CHECK_FALSE(r->started);
  CHECK(t.slots_in_use() == 0);
  resolved(t, msg::step_plan{3, {row(1, false)}, {start(1, false)}});
  CHECK(t.find(1)->sampling.temperature == 0.7f);
  CHECK(t.find(1)->bias_tokens.size() == 2);
  // Ended: forgotten; unknown ids are ignored.
  msg::step_plan q{4, {}};
  q.ended = {1, 42};
  resolved(t, q);
  CHECK(t.find(1) == nullptr);
  CHECK(t.size() == 0);
  CHECK(t.slots_in_use() == 0);
}

TEST_CASE("sequence table: a following row reads the slot its sequence's last sample was "
          "written to",
          "[engine]") {
  actors::sequence_table t(8);
  // 1 and 5 sample one token each; 2 verifies drafts (its next token depends on how many stand:
  // not followable); 3 is a prefill chunk that samples nothing.
  const msg::step_plan first{
      1,
      {row(1, false), row(2, false, 2), row(3, false, 0, false), row(5, false)},
      {start(1), start(2), start(3), start(5)}};
  std::vector<actors::row_use> uses = resolved(t, first);
  REQUIRE(uses.size() == 4);
  CHECK(uses[0].read == -1);
  CHECK(uses[0].write == 0);  // slots in order of starts
  CHECK(uses[0].first);
  CHECK(uses[1].write == -1);  // drafts: nothing written
  CHECK(uses[1].table == 1);   // but its table is kept
  CHECK(uses[2].write == -1);  // nothing sampled
  CHECK(uses[2].table == 2);
  CHECK(uses[3].write == 3);
  t.launched(first, uses);
  CHECK(t.slots_in_use() == 4);

  const msg::step_plan p{
      2, {row(4, false), row(5, true), row(1, true), row(3, true), row(2, true)}, {start(4)}};
  uses = resolved(t, p);
  REQUIRE(uses.size() == 5);  // the plan is left as it was: every row has its use
  CHECK(uses[0].read == -1);
  CHECK(uses[0].write == 4);  // 4's start takes a slot
  CHECK(uses[1].runs);
  CHECK_FALSE(uses[1].first);
  CHECK(uses[1].read == 3);  // its own slot, whatever its place in either plan
  CHECK(uses[1].write == 3);
  CHECK(uses[2].read == 0);
  CHECK_FALSE(uses[3].runs);  // 3 sampled nothing, 2 verified drafts: nothing to feed
  CHECK_FALSE(uses[4].runs);
}

TEST_CASE("sequence table: only the plan launched just before counts, and a failed launch "
          "leaves nothing",
          "[engine]") {
  actors::sequence_table t(8);
  const msg::step_plan a{1, {row(1, false), row(2, false)}, {start(1), start(2)}};
  t.launched(a, resolved(t, a));
  const msg::step_plan b{2, {row(2, true)}};
  t.launched(b, resolved(t, b));
  const msg::step_plan p{3, {row(1, true), row(2, true)}};  // 1's slot was written two plans ago
  std::vector<actors::row_use> uses = resolved(t, p);
  CHECK_FALSE(uses[0].runs);
  CHECK(uses[1].runs);
  CHECK(uses[1].read == 1);
  // p's launch fails (launched() is not called): nothing can follow it.
  uses = resolved(t, msg::step_plan{4, {row(2, true)}});
  CHECK_FALSE(uses[0].runs);
}

TEST_CASE("sequence table: an ended sequence gives its slot back, and a sequence started when "
          "the pool is full does not run",
          "[engine]") {
  actors::sequence_table t(2);
  const msg::step_plan a{
      1, {row(1, false), row(2, false), row(3, false)}, {start(1), start(2), start(3)}};
  std::vector<actors::row_use> uses = resolved(t, a);
  CHECK(uses[0].write == 0);
  CHECK(uses[1].write == 1);
  // No slot left (the scheduler's max_num_seqs keeps it from happening): 3's row does not run,
  // its table has nowhere to be kept; nothing else breaks.
  CHECK_FALSE(uses[2].runs);
  CHECK(uses[2].write == -1);
  CHECK(uses[2].table == -1);
  t.launched(a, uses);
  CHECK_FALSE(resolved(t, msg::step_plan{2, {row(3, true)}})[0].runs);
  msg::step_plan c{3, {row(4, false), row(1, true)}, {start(4)}};
  c.ended = {1, 7};  // 7 never was
  const std::optional<std::string> error = t.apply(c);
  REQUIRE(error);  // 1 ended: a row of it is a protocol error
  uses = t.resolve(c);
  CHECK(uses[0].write == 0);  // 1's slot, now 4's
  CHECK_FALSE(uses[1].runs);
  CHECK(t.slots_in_use() == 2);
}

TEST_CASE("sequence table: a table is written past the entries a launch that succeeded left "
          "there",
          "[engine]") {
  actors::sequence_table t(4);
  std::vector<actors::row_use> uses;
  std::uint64_t step = 0;
  auto plan = [&](std::int32_t keep, table fresh, bool follows = false) {
    msg::step_plan p{++step, {row(1, follows)}};
    if (step == 1) p.starts = {start(1)};
    p.rows[0].keep_blocks = keep;
    p.rows[0].new_blocks = std::move(fresh);
    uses = resolved(t, p);
    return p;
  };
  msg::step_plan p = plan(0, {5, 6});
  CHECK(uses[0].table == 0);
  CHECK(uses[0].table_keep == 0);  // a new slot: the whole table is written
  CHECK(uses[0].table_len == 2);
  t.launched(p, uses);
  p = plan(2, {7});
  CHECK(uses[0].table_keep == 2);  // only the new block
  CHECK(uses[0].table_len == 3);
  t.launched(p, uses);
  p = plan(1, {9, 10});  // the row replaces entries 1 and 2
  CHECK(uses[0].table_keep == 1);
  // ... and its launch fails
  p = plan(3, {});
  CHECK(uses[0].table_keep == 1);  // what failed is written again
  t.launched(p, uses);
  p = plan(3, {});
  CHECK(uses[0].table_keep == 3);
  p = plan(2, {11}, true);  // its launch failed: a following row does not run
  CHECK_FALSE(uses[0].runs);
  p = plan(3, {});
  CHECK(uses[0].table_keep == 2);  // the row that did not run: its new block never written
}

TEST_CASE("sequence table: a slot's bias and penalty list are written by the first sampling "
          "row in it, once a launch succeeded, and again after preemption",
          "[engine]") {
  actors::sequence_table t(4);
  msg::sequence_start s = start(1);
  s.sampling.frequency_penalty = 0.5f;
  s.sampling.logit_bias_tokens = {5};
  s.sampling.logit_bias_values = {1.0f};
  s.penalties = {{3, 0, true}};
  std::vector<actors::row_use> uses =
      resolved(t, msg::step_plan{1, {row(1, false, 0, false)}, {s}});
  CHECK(uses[0].bias == -1);  // a prefill chunk samples nothing: nothing written
  CHECK(uses[0].penalties == -1);
  uses = resolved(t, msg::step_plan{2, {row(1, false)}});
  CHECK(uses[0].bias == 0);
  CHECK(uses[0].bias_init);
  CHECK(uses[0].penalties == 0);
  CHECK(uses[0].penalty_init);  // that launch fails: written again by the next row
  const msg::step_plan p{3, {row(1, false)}};
  uses = resolved(t, p);
  CHECK(uses[0].bias_init);
  CHECK(uses[0].penalty_init);
  t.launched(p, uses);
  uses = resolved(t, msg::step_plan{4, {row(1, false)}});
  CHECK(uses[0].bias == 0);
  CHECK_FALSE(uses[0].bias_init);  // in place
  CHECK(uses[0].penalties == 0);
  CHECK_FALSE(uses[0].penalty_init);
  msg::step_plan q{5, {row(1, false)}};
  q.preempted = {1};
  q.starts = {start(1, false)};  // preempted and back in one plan
  q.starts[0].penalties = {{3, 1, true}};
  uses = resolved(t, q);
  CHECK(uses[0].first);
  CHECK(uses[0].bias_init);
  CHECK(uses[0].penalty_init);
  CHECK(t.find(1)->start.penalties[0].output_count == 1);
}

}  // namespace courier_test_actors_engine_sequence_table
