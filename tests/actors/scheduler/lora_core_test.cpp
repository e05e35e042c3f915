// LoRA slots in the scheduler's policy: under random arrivals, cancels, preemptions and failed
// steps, every row runs in a slot holding its own adapter (as the engine would have it, from the
// plans' loads alone), each slot is held exactly by its running sequences (check_invariants),
// and at the end no slot is held.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>
#include <string>

#include "tests/support/scheduler_core_driver.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_lora_core {

using namespace courier;
using actors::outgoing_event;

namespace {

const std::vector<std::string> adapters = {"a", "b", "c", "d", "e"};

msg::engine_ready ready_with_loras(std::int32_t blocks, std::int32_t slots) {
  msg::engine_ready r = test::fake_engine_ready(blocks);
  r.lora_slots = slots;
  r.lora_adapters = adapters;
  return r;
}

// The engine's view: what each slot holds, from the loads the plans carried (a failed step's
// loads may not have run: their slots hold nothing known).
struct engine_slots {
  std::map<std::int32_t, std::string> held;
  void check(const msg::step_plan& p, const std::map<msg::request_id, std::string>& adapter_of) {
    for (const msg::lora_load& l : p.lora_loads) held[l.slot] = l.adapter;
    for (const msg::plan_row& row : p.rows) {
      const std::string& want = adapter_of.at(row.seq);
      INFO("step " << p.step << ", sequence " << row.seq << ", adapter '" << want << "'");
      if (want.empty()) {
        REQUIRE(row.lora_slot == -1);
      } else {
        REQUIRE(row.lora_slot >= 0);
        REQUIRE(held.count(row.lora_slot));
        REQUIRE(held.at(row.lora_slot) == want);
      }
    }
  }
  void failed(const msg::step_plan& p) {
    for (const msg::lora_load& l : p.lora_loads) held.erase(l.slot);
  }
};

void run_random(unsigned seed) {
  std::mt19937 rng(seed);
  actors::scheduler_options o;
  o.overlap = false;
  o.max_batched_tokens = 64;
  const std::int32_t slots = 1 + static_cast<std::int32_t>(rng() % 3);
  actors::scheduler_core core(o, ready_with_loras(20, slots));
  test::core_events ev;
  engine_slots engine;
  std::map<msg::request_id, std::string> adapter_of;
  std::map<msg::request_id, int> want;
  std::set<msg::request_id> cancelled;
  std::vector<outgoing_event> out;
  msg::request_id next = 1;
  int failed_steps = 0;
  for (int op = 0; op < 400; ++op) {
    const unsigned r = rng() % 10;
    if (r < 3 && next < 80) {
      const msg::request_id id = next++;
      msg::submit s = test::fake_request(id, 8 + static_cast<int>(rng() % 60),
                                         1 + static_cast<int>(rng() % 24), true);
      for (auto& t : s.prompt) t = static_cast<msg::token_id>((t + id) % 500);
      const unsigned a = rng() % (adapters.size() + 1);
      s.adapter = a < adapters.size() ? adapters[a] : "";
      adapter_of[id] = s.adapter;
      want[id] = s.max_tokens;
      core.submit(std::move(s), out);
    } else if (r == 3 && next > 1) {
      const msg::request_id id = 1 + rng() % (next - 1);
      if (!ev.last.count(id)) cancelled.insert(id);
      core.cancel(id, out, msg::cancel_reason::client_gone);
    } else {
      auto plan = core.plan(out);
      ev.take(out);
      core.check_invariants();
      if (!plan) continue;
      engine.check(*plan, adapter_of);
      msg::step_result res = test::fake_engine(*plan);
      if (rng() % 23 == 0) {  // the step fails: its rows' sequences fail, its loads are unknown
        res.rows.clear();
        res.error = msg::error_code::engine_failure;
        res.message = "injected";
        engine.failed(*plan);
        ++failed_steps;
      }
      core.on_result(std::move(res), out);
    }
    ev.take(out);
    core.check_invariants();
  }
  // Drain: no more failures.
  for (int i = 0; i < 10000; ++i) {
    auto plan = core.plan(out);
    ev.take(out);
    if (!plan) break;
    engine.check(*plan, adapter_of);
    core.on_result(test::fake_engine(*plan), out);
    ev.take(out);
    core.check_invariants();
  }
  INFO("seed " << seed << ", " << slots << " slots, " << failed_steps << " failed steps");
  const msg::scheduler_stats st = core.stats();
  CHECK(st.num_running == 0);
  CHECK(st.num_waiting == 0);
  CHECK(st.lora_slots_in_use == 0);
  for (const auto& [id, n] : want) {
    INFO("request " << id);
    REQUIRE(ev.last.count(id));
    const msg::token_event& e = ev.last.at(id);
    if (e.finish == msg::finish_reason::length) {
      CHECK(ev.tokens.at(id).size() == static_cast<std::size_t>(n));
    } else {
      CHECK((cancelled.count(id) || e.finish == msg::finish_reason::error));
    }
  }
}

}  // namespace

TEST_CASE(
    "lora slots: random arrivals, cancels, preemptions and failures keep every row on "
    "its own adapter and every slot held exactly by its running sequences",
    "[scheduler][lora]") {
  for (unsigned seed = 1; seed <= 12; ++seed) run_random(seed);
}

TEST_CASE(
    "lora slots: an adapter the engine does not have is refused; with one slot, two "
    "adapters take turns and the one in the slot is not loaded again",
    "[scheduler][lora]") {
  actors::scheduler_options o;
  o.overlap = false;
  test::core_driver d(o, ready_with_loras(64, 1));
  msg::submit bad = test::fake_request(1, 20, 4);
  bad.adapter = "nope";
  d.submit(bad);
  REQUIRE(d.last.count(1));
  CHECK(d.last.at(1).error == msg::error_code::invalid_request);
  for (msg::request_id id = 2; id <= 5; ++id) {
    msg::submit s = test::fake_request(id, 20, 4, true);
    s.adapter = id <= 3 ? "b" : "a";
    d.submit(s);
  }
  std::vector<msg::lora_load> loads;
  std::vector<outgoing_event> out;
  std::map<msg::request_id, std::string> adapter_of = {{2, "b"}, {3, "b"}, {4, "a"}, {5, "a"}};
  engine_slots engine;
  while (auto plan = d.core.plan(out)) {
    d.take(out);
    engine.check(*plan, adapter_of);
    loads.insert(loads.end(), plan->lora_loads.begin(), plan->lora_loads.end());
    std::set<std::string> running;
    for (const auto& row : plan->rows) running.insert(adapter_of.at(row.seq));
    CHECK(running.size() == 1);  // one slot: one adapter's rows at a time
    d.core.on_result(test::fake_engine(*plan), out);
    d.take(out);
    d.core.check_invariants();
  }
  for (msg::request_id id = 2; id <= 5; ++id) {
    CHECK(d.last.at(id).finish == msg::finish_reason::length);
    CHECK(d.tokens.at(id) == test::expected_tokens(id, 20, 4));
  }
  // b (2 and 3 are admitted together), then a (4 and 5, once b's slot is free): two loads.
  REQUIRE(loads.size() == 2);
  CHECK(loads[0].adapter != loads[1].adapter);
  CHECK(d.core.stats().lora_loads == 2);
}

TEST_CASE(
    "lora slots: an adapter unloaded while requests use it: new ones are refused, those "
    "admitted finish with it, and only then may the engine forget it",
    "[scheduler][lora]") {
  actors::scheduler_options o;
  o.overlap = false;
  test::core_driver d(o, ready_with_loras(64, 1));
  for (msg::request_id id = 1; id <= 2; ++id) {
    msg::submit s = test::fake_request(id, 20, 6, true);
    s.adapter = "a";
    d.submit(s);
  }
  d.run([](int steps) { return steps == 2; });  // both running (one slot, one adapter)
  CHECK(d.core.unload("a").ok);
  CHECK(d.core.unload("a").status == 404);
  CHECK(d.core.begin_load("a").status == 409);  // still being unloaded
  msg::submit late = test::fake_request(3, 20, 6, true);
  late.adapter = "a";
  d.submit(late);
  CHECK(d.last.at(3).error == msg::error_code::invalid_request);
  CHECK(d.core.take_unloaded().empty());  // 1 and 2 still use it
  d.run();
  for (msg::request_id id = 1; id <= 2; ++id) {
    CHECK(d.last.at(id).finish == msg::finish_reason::length);
    CHECK(d.tokens.at(id) == test::expected_tokens(id, 20, 6));
  }
  CHECK(d.core.take_unloaded() == std::vector<std::string>{"a"});
  CHECK(d.core.take_unloaded().empty());
  // Loaded again: its slot was forgotten, so the next plan loads it once more.
  REQUIRE(d.core.begin_load("a").ok);
  CHECK(d.core.begin_load("a").status == 409);  // being read
  d.core.load_done("a", true);
  const std::uint64_t loads = d.core.stats().lora_loads;
  msg::submit again = test::fake_request(4, 20, 6, true);
  again.adapter = "a";
  d.submit(again);
  d.run();
  CHECK(d.last.at(4).finish == msg::finish_reason::length);
  CHECK(d.core.stats().lora_loads == loads + 1);
  // A load the engine failed leaves the name free and unusable.
  REQUIRE(d.core.begin_load("b2").ok);
  d.core.load_done("b2", false);
  msg::submit b2 = test::fake_request(5, 20, 6, true);
  b2.adapter = "b2";
  d.submit(b2);
  CHECK(d.last.at(5).error == msg::error_code::invalid_request);
  CHECK(d.core.begin_load("b2").ok);
}

}  // namespace courier_test_actors_scheduler_lora_core
