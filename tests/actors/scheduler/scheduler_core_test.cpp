// The scheduler's policy without actors or a model: a fake engine answers each plan with a token
// that is a function of (sequence, position), so the expected outputs are known exactly.
#include <catch2/catch.hpp>

#include <map>
#include <random>

#include "grammar/random_walk.hpp"
#include "grammar/token_mask.hpp"
#include "tests/support/scheduler_core_driver.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_scheduler_core {

using namespace courier;
using actors::outgoing_event;
using actors::scheduler_options;

namespace {

using driver = test::core_driver;
using test::expected_tokens;
using test::next_token;

msg::submit request(msg::request_id id, int prompt_len, int max_tokens) {
  return test::fake_request(id, prompt_len, max_tokens);
}

}  // namespace

TEST_CASE("scheduler core: outputs follow the model under chunking and preemption", "[scheduler]") {
  for (int budget : {7, 64, 2048}) {
    for (int blocks : {12, 200}) {
      INFO("max_batched_tokens " << budget << ", " << blocks << " blocks");
      scheduler_options o;
      o.max_batched_tokens = budget;
      driver d(o, test::fake_engine_ready(blocks));
      std::mt19937 rng(budget + blocks);
      std::map<msg::request_id, std::pair<int, int>> shape;
      for (msg::request_id id = 1; id <= 40; ++id) {
        const int len = 1 + static_cast<int>(rng() % 100), out = 1 + static_cast<int>(rng() % 60);
        shape[id] = {len, out};
        auto s = request(id, len, out);
        s.ignore_eos = true;
        d.submit(s);
      }
      d.run();
      for (auto& [id, lo] : shape) {
        CHECK(d.tokens[id] == expected_tokens(id, lo.first, lo.second));
        CHECK(d.last[id].finish == msg::finish_reason::length);
      }
      const auto st = d.core.stats();
      CHECK(st.num_free_blocks + st.num_cached_blocks == blocks);
      if (blocks == 12) CHECK(st.num_preemptions > 0);
      d.core.evict_all_cached();
      CHECK(d.core.stats().num_free_blocks == blocks);
    }
  }
}

TEST_CASE("scheduler core: a sequence's sampling parameters travel once, in its first sampling "
          "row, preemption or not",
          "[scheduler]") {
  scheduler_options o;
  o.max_batched_tokens = 64;
  driver d(o, test::fake_engine_ready(12));  // few blocks: sequences are preempted
  for (msg::request_id id = 1; id <= 12; ++id) {
    msg::submit s = request(id, 20 + static_cast<int>(id) * 3, 30);
    s.ignore_eos = true;
    s.sampling.temperature = 0.1f * static_cast<float>(id);
    s.sampling.logit_bias_tokens = {static_cast<msg::token_id>(id)};
    s.sampling.logit_bias_values = {1.5f};
    d.submit(s);
  }
  std::vector<outgoing_event> out;
  std::map<msg::request_id, int> sampling_rows, starts;
  while (auto plan = d.core.plan(out)) {
    d.take(out);
    d.engine_tables.on_plan(*plan, d.core);  // every sampling row finds its parameters
    for (const msg::sequence_start& st : plan->starts) {
      ++starts[st.seq];
      if (st.carries_sampling) {  // the request's, as sent
        CHECK(st.sampling.temperature == 0.1f * static_cast<float>(st.seq));
        CHECK(st.sampling.logit_bias_tokens ==
              std::vector<msg::token_id>{static_cast<msg::token_id>(st.seq)});
        CHECK(st.sampling.has_seed);
      } else {
        CHECK(st.sampling.logit_bias_tokens.empty());  // nothing travels again
      }
    }
    for (const msg::plan_row& row : plan->rows) {
      if (row.sample) ++sampling_rows[row.seq];
    }
    d.core.on_result(test::fake_engine(*plan), out);
    d.take(out);
    d.core.check_invariants();
  }
  CHECK(d.core.stats().num_preemptions > 0);
  for (msg::request_id id = 1; id <= 12; ++id) {
    INFO("sequence " << id);
    CHECK(d.tokens[id] == expected_tokens(id, 20 + static_cast<int>(id) * 3, 30));
    CHECK(sampling_rows[id] >= 30);
    CHECK(d.engine_tables.carried[id] == 1);  // sent once, preemptions or not
    CHECK(d.engine_tables.carried[id] == 1);
  }
}

TEST_CASE("scheduler core: a decode step never waits behind a long prompt", "[scheduler]") {
  scheduler_options o;
  o.max_batched_tokens = 32;
  driver d(o, test::fake_engine_ready(400));
  d.submit(request(1, 4, 50));
  d.run([&](int steps) {
    if (steps == 2) d.submit(request(2, 1000, 1));  // a long prompt arrives mid-decode
    return false;
  });
  // Request 1 produced a token at every step, so it finished after its 50 decode steps even
  // though request 2's prompt took 1000 / 31 further steps of prefill beside it.
  CHECK(d.tokens[1].size() == 50);
  CHECK(d.tokens[2].size() == 1);
}

TEST_CASE("scheduler core: EOS, stop ids, ignore_eos, max_tokens and max_model_len end requests",
          "[scheduler]") {
  driver d(scheduler_options{}, test::fake_engine_ready(200, 64));
  // The fake model emits next_token(id, pos); find a request whose 3rd token we can stop on.
  auto s1 = request(1, 10, 20);
  const msg::token_id third = next_token(1, 12);
  s1.stop_token_ids = {third};
  d.submit(s1);
  auto s2 = request(2, 60, 20);  // max_model_len 64: 4 tokens, then length
  d.submit(s2);
  auto s3 = request(3, 10, 5);
  d.submit(s3);
  d.run();
  CHECK(d.tokens[1] == expected_tokens(1, 10, 3));
  CHECK(d.last[1].finish == msg::finish_reason::stop);
  CHECK(d.tokens[2].size() == 4);
  CHECK(d.last[2].finish == msg::finish_reason::length);
  CHECK(d.tokens[3].size() == 5);
  CHECK(d.last[3].finish == msg::finish_reason::length);

  // EOS ends a request unless ignore_eos: make request 4's second token the EOS id.
  auto r = test::fake_engine_ready(200);
  r.eos_token_ids = {next_token(4, 11)};
  driver e(scheduler_options{}, r);
  e.submit(request(4, 10, 20));
  e.run();
  CHECK(e.tokens[4].size() == 2);
  CHECK(e.last[4].finish == msg::finish_reason::stop);
  driver f(scheduler_options{}, r);
  auto s4 = request(4, 10, 20);
  s4.ignore_eos = true;
  f.submit(s4);
  f.run();
  CHECK(f.tokens[4].size() == 20);
}

TEST_CASE("scheduler core: a failed step fails its requests and the rest go on", "[scheduler]") {
  driver d(scheduler_options{}, test::fake_engine_ready(200));
  d.submit(request(1, 5, 10));
  d.submit(request(2, 5, 10));
  std::vector<outgoing_event> out;
  auto plan = d.core.plan(out);
  REQUIRE(plan);
  d.engine_tables.on_plan(*plan, d.core);  // the engine's copies, checked again by run() below
  msg::step_result bad;
  bad.step = plan->step;
  bad.error = msg::error_code::engine_failure;
  bad.message = "device lost";
  d.core.on_result(bad, out);
  d.take(out);
  CHECK(d.last[1].finish == msg::finish_reason::error);
  CHECK(d.last[1].error == msg::error_code::engine_failure);
  CHECK_THAT(d.last[1].message, Catch::Contains("device lost"));
  CHECK(d.last[2].finish == msg::finish_reason::error);
  d.submit(request(3, 5, 4));
  d.run();
  CHECK(d.tokens[3] == expected_tokens(3, 5, 4));
  CHECK(d.core.stats().num_free_blocks + d.core.stats().num_cached_blocks == 200);
}

TEST_CASE("scheduler core: cancelling at random moments returns every block", "[scheduler]") {
  driver d(scheduler_options{}, test::fake_engine_ready(60));
  std::mt19937 rng(3);
  for (msg::request_id id = 1; id <= 30; ++id) {
    auto s = request(id, 1 + static_cast<int>(rng() % 80), 1 + static_cast<int>(rng() % 40));
    s.ignore_eos = true;
    d.submit(s);
  }
  d.run([&](int) {
    if (rng() % 3 == 0) {
      std::vector<outgoing_event> out;
      d.core.cancel(1 + rng() % 30, out);
      d.take(out);
      d.core.check_invariants();
    }
    return false;
  });
  CHECK(d.last.size() == 30);
  int cancelled = 0;
  for (auto& [id, e] : d.last) cancelled += e.finish == msg::finish_reason::cancelled;
  CHECK(cancelled > 0);
  d.core.evict_all_cached();
  CHECK(d.core.stats().num_free_blocks == 60);
}

TEST_CASE("scheduler core: a full waiting queue answers overloaded", "[scheduler]") {
  scheduler_options o;
  o.max_waiting = 2;
  driver d(o, test::fake_engine_ready(200));
  for (msg::request_id id = 1; id <= 3; ++id) d.submit(request(id, 5, 5));
  CHECK(d.last[3].error == msg::error_code::overloaded);
  CHECK(d.last.count(1) == 0);
  d.run();
  CHECK(d.tokens[1].size() == 5);
}

TEST_CASE("scheduler core: a row that fails alone fails its request only; ended grammars are "
          "listed in the next plan",
          "[scheduler]") {
  driver d(scheduler_options{}, test::fake_engine_ready(200));
  msg::submit constrained = request(1, 5, 10);
  constrained.sampling.grammar.key = "test";  // the fake engine does not read it
  constrained.sampling.grammar.masks = std::make_shared<grammar::mask_cache>(
      grammar::compile_gbnf("root ::= \"a\""), grammar::byte_vocabulary());
  d.submit(constrained);
  d.submit(request(2, 5, 10));
  std::vector<outgoing_event> out;
  auto plan = d.core.plan(out);
  REQUIRE(plan);
  CHECK(plan->ended.empty());
  d.engine_tables.on_plan(*plan, d.core);  // every plan reaches the engine's copies
  msg::step_result r = test::fake_engine(*plan);
  REQUIRE(r.rows.at(0).seq == 1);
  r.rows[0].error = msg::error_code::invalid_request;
  r.rows[0].message = "no token continues the grammar";
  d.core.on_result(r, out);
  d.take(out);
  CHECK(d.last[1].finish == msg::finish_reason::error);
  CHECK(d.last[1].error == msg::error_code::invalid_request);
  CHECK(d.last[1].message == "no token continues the grammar");
  CHECK(d.last.count(2) == 0);
  plan = d.core.plan(out);
  REQUIRE(plan);
  CHECK(plan->ended == std::vector<msg::request_id>{1});  // once
  d.engine_tables.on_plan(*plan, d.core);
  d.core.on_result(test::fake_engine(*plan), out);
  d.take(out);
  d.run();
  CHECK(d.tokens[2] == expected_tokens(2, 5, 10));
  CHECK(d.core.stats().num_free_blocks + d.core.stats().num_cached_blocks == 200);
}

TEST_CASE("scheduler core: every time it reports comes from its clock, which tests set",
          "[scheduler]") {
  std::int64_t t = 1'000'000'000;  // ns
  actors::scheduler_options o;
  o.clock = [&t] { return t; };
  test::core_driver d(o, test::fake_engine_ready(64));
  d.submit(test::fake_request(1, 20, 3));  // arrives at 1.0 s
  t += 250'000'000;
  // Before each step the clock moves 0.1 s: planned and answered at 1.35 s (the prompt and the
  // first token), 1.45 s, 1.55 s (the third token ends it).
  d.run([&](int) {
    t += 100'000'000;
    return false;
  });
  REQUIRE(d.last.at(1).finish == msg::finish_reason::length);
  auto report = d.core.take_report();
  REQUIRE(report);
  REQUIRE(report->finished.size() == 1);
  const msg::request_summary& r = report->finished[0];
  CHECK(r.queue_s == Approx(0.35));
  CHECK(r.ttft_s == Approx(0.35));
  CHECK(r.prefill_s == Approx(0.0).margin(1e-12));
  CHECK(r.decode_s == Approx(0.2));
  CHECK(r.e2e_s == Approx(0.55));
  REQUIRE(r.inter_token_s.size() == 2);
  CHECK(r.inter_token_s[0] == Approx(0.1));
  CHECK(r.inter_token_s[1] == Approx(0.1));
  // Each step took 0: planned and answered at the same instant of this clock.
  REQUIRE(report->steps.size() == 3);
  for (const msg::step_summary& s : report->steps) CHECK(s.duration_s == Approx(0.0).margin(1e-12));
}

TEST_CASE("scheduler core: a penalised sequence's start carries each distinct token's prompt "
          "and output counts; its rows carry nothing, and counting the tokens sampled keeps the "
          "engine's copy exact",
          "[scheduler]") {
  driver d(scheduler_options{}, test::fake_engine_ready(200));
  msg::submit pen = request(1, 12, 20);
  pen.prompt = {5, 7, 5, 9, 100, 7, 5, 3, 3, 3, 200, 5};
  pen.sampling.frequency_penalty = 0.5f;
  pen.ignore_eos = true;
  d.submit(pen);
  d.submit(request(2, 6, 5));  // not penalised: its rows carry no entries
  // The "model" answers from a short cycle, so output tokens repeat and meet prompt tokens.
  const std::vector<msg::token_id> cycle = {5, 42, 42, 7, 300};
  // The engine's copy: (in prompt, output count) by token, as the carried list set it, then
  // counting each token sampled for the sequence, as the device does.
  std::map<msg::token_id, std::pair<bool, int>> copy;
  std::vector<outgoing_event> out;
  int rows_checked = 0, carried = 0;
  while (auto plan = d.core.plan(out)) {
    d.take(out);
    d.engine_tables.on_plan(*plan, d.core);
    msg::step_result r;
    r.step = plan->step;
    for (const msg::sequence_start& st : plan->starts) {
      if (st.seq == 2) {
        CHECK(st.penalties.empty());
        continue;
      }
      ++carried;
      copy.clear();
      for (const msg::penalty_entry& e : st.penalties) {
        REQUIRE(copy.count(e.token) == 0);  // distinct
        copy[e.token] = {e.in_prompt, e.output_count};
      }
    }
    for (const msg::plan_row& row : plan->rows) {
      msg::row_result rr;
      rr.seq = row.seq;
      if (row.sample) {
        if (row.seq == 2) {
          rr.tokens = {test::next_token(row.seq, row.start_pos + 1)};
        } else {
          // What the penalties must be, counted here from the prompt and the tokens emitted.
          std::map<msg::token_id, std::pair<bool, int>> want;
          for (const msg::token_id t : pen.prompt) want[t].first = true;
          for (const msg::token_id t : d.tokens[1]) ++want[t].second;
          CHECK(copy == want);
          ++rows_checked;
          rr.tokens = {cycle[d.tokens[1].size() % cycle.size()]};
          ++copy[rr.tokens[0]].second;
        }
      }
      r.rows.push_back(rr);
    }
    d.core.on_result(r, out);
    d.take(out);
    d.core.check_invariants();
  }
  CHECK(carried == 1);
  CHECK(rows_checked == 20);
  REQUIRE(d.tokens[1].size() == 20);
  CHECK(d.tokens[1][1] == 42);
}

TEST_CASE("scheduler core: a model with recurrent state runs a sequence only with a state "
          "slot, each its own, given back at every exit; no prefix reuse, no drafts",
          "[scheduler]") {
  for (int blocks : {9, 200}) {  // 9: preemption gives slots back too
    INFO(blocks << " blocks");
    msg::engine_ready ready = test::fake_engine_ready(blocks);
    ready.recurrent = true;
    ready.state_slots = 3;
    scheduler_options o;
    o.lookup.enabled = true;  // asked for: turned off
    driver d(o, ready);
    std::map<msg::request_id, std::pair<int, int>> shape;
    for (msg::request_id id = 1; id <= 10; ++id) {
      const int len = id % 2 ? 20 : 5 + static_cast<int>(id), out = 30;
      shape[id] = {len, out};
      auto s = request(id, len, out);
      s.ignore_eos = true;
      d.submit(s);
    }
    d.submit(request(11, 20, 4));  // request 1's prompt again: no prefix reuse for this model
    shape[11] = {20, 4};
    std::vector<outgoing_event> out;
    int max_running = 0;
    while (auto plan = d.core.plan(out)) {
      d.take(out);
      d.core.check_invariants();  // every running sequence holds one slot, distinct, none lost
      d.engine_tables.on_plan(*plan, d.core);  // the engine's records: each row's slot
      std::map<std::int32_t, msg::request_id> holder;
      for (const msg::plan_row& row : plan->rows) {
        const std::int32_t slot = d.engine_tables.seqs.find(row.seq)->start.state_slot;
        REQUIRE(slot >= 0);
        REQUIRE(slot < 3);
        REQUIRE(row.num_drafts == 0);
        CHECK(holder.emplace(slot, row.seq).second);  // each row its own slot
      }
      max_running = std::max(max_running, d.core.stats().num_running);
      const auto report = d.core.take_report();  // the slots held, as the metrics see them
      REQUIRE(report);
      CHECK(report->state_usage == Approx(report->num_running / 3.0));
      d.core.on_result(test::fake_engine(*plan), out);
      d.take(out);
      d.core.check_invariants();
    }
    CHECK(max_running == 3);
    for (auto& [id, lo] : shape) CHECK(d.tokens[id] == expected_tokens(id, lo.first, lo.second));
    const auto st = d.core.stats();
    CHECK(st.cached_tokens == 0);
    CHECK(st.spec_drafts == 0);
    if (blocks == 9) CHECK(st.num_preemptions > 0);
  }
}

TEST_CASE("state pool: a slot goes back once, when its holder is reset, moved over or destroyed",
          "[scheduler]") {
  actors::state_pool pool(2);
  std::optional<actors::state_slot> a = pool.take(), b = pool.take();
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->index() != b->index());
  CHECK_FALSE(pool.take());
  CHECK(pool.num_free() == 0);
  actors::state_slot moved = std::move(*a);
  CHECK(pool.num_free() == 0);  // moving is not giving back
  CHECK_FALSE(*a);
  a->reset();  // an empty holder gives nothing back
  CHECK(pool.num_free() == 0);
  moved.reset();
  CHECK(pool.num_free() == 1);
  moved.reset();
  CHECK(pool.num_free() == 1);  // once
  { actors::state_slot c = *pool.take(); }
  CHECK(pool.num_free() == 1);  // destroyed: back
  *b = *pool.take();            // assigned over: b's old slot back, the new one held
  CHECK(pool.num_free() == 1);
  b.reset();
  CHECK(pool.num_free() == 2);
}

}  // namespace courier_test_actors_scheduler_scheduler_core

namespace courier_test_actors_scheduler_scheduler_core {

TEST_CASE("scheduler core: one call takes what a handler leaves: every step there is room for, "
          "the report, then its token events",
          "[scheduler]") {
  std::int64_t t = 1'000;
  scheduler_options o;
  o.overlap = true;  // two steps in flight
  o.clock = [&t] { return t += 10; };  // every reading moves on: planning takes time
  test::core_driver d(o, test::fake_engine_ready(64));
  std::vector<outgoing_event> out;
  d.core.submit(request(1, 8, 3), out);
  CHECK(out.empty());
  actors::scheduler_effects fx = d.core.take_effects(std::move(out));
  // The prompt, then a row that follows the token the first step samples.
  REQUIRE(fx.steps.size() == 2);
  const actors::planned_step& prompt = fx.steps[0];
  const actors::planned_step& follow = fx.steps[1];
  REQUIRE(prompt.plan.rows.size() == 1);
  CHECK(prompt.plan.rows[0].tokens.size() == 8);
  CHECK(prompt.prefill == 8);
  CHECK(prompt.decode == 0);
  REQUIRE(follow.plan.rows.size() == 1);
  CHECK(follow.plan.rows[0].follows);
  CHECK(follow.decode == 1);
  CHECK(follow.prefill == 0);
  CHECK(prompt.plan.step + 1 == follow.plan.step);
  CHECK(prompt.start_ns < prompt.end_ns);
  CHECK(prompt.end_ns < follow.start_ns);
  CHECK(fx.disk.empty());
  CHECK(fx.lora.empty());
  CHECK(fx.events.empty());
  CHECK(d.core.take_effects().steps.empty());  // both steps in flight: no room

  // The first step's answer: its token event comes last, after the step that room was made for.
  const std::uint64_t follow_step = follow.plan.step;  // fx is taken again below
  d.core.on_result(test::fake_engine(prompt.plan), out);
  REQUIRE(out.size() == 1);
  fx = d.core.take_effects(std::move(out));
  REQUIRE(fx.steps.size() == 1);
  CHECK(fx.steps[0].plan.step == follow_step + 1);
  REQUIRE(fx.events.size() == 1);
  CHECK(fx.events[0].event.id == 1);
  CHECK(fx.events[0].event.tokens == test::expected_tokens(1, 8, 1));
  REQUIRE(fx.report);  // the step answered is counted
  CHECK(fx.report->steps.size() == 1);
  d.core.check_invariants();
}

}  // namespace courier_test_actors_scheduler_scheduler_core
