// LoRA slots in the scheduler's policy: under random arrivals, cancels, preemptions and failed
// steps, every row runs in a slot holding its own adapter (as the engine would have it, from the
// plans' loads alone), each slot is held exactly by its running sequences (check_invariants),
// and at the end no slot is held.
#include <catch2/catch.hpp>

#include <functional>
#include <deque>
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

// host_copies: lora.max_cpu_loras (0: all); the first that many adapters have one at start.
msg::engine_ready ready_with_loras(std::int32_t blocks, std::int32_t slots,
                                   std::int32_t host_copies = 0) {
  msg::engine_ready r = test::fake_engine_ready(blocks);
  r.lora_slots = slots;
  r.lora_adapters = adapters;
  r.lora_adapter_fingerprints = {11, 12, 13, 14, 15};
  r.lora_host_capacity = host_copies;
  r.lora_host_adapters = adapters;
  if (host_copies > 0) r.lora_host_adapters.resize(static_cast<std::size_t>(host_copies));
  return r;
}

// The engine's view: what each slot holds, from the loads the plans carried (a failed step's
// loads may not have run: their slots hold nothing known), and which adapters it has a host
// copy of (a slot is loaded from one), from the stages and evictions the scheduler asked for.
struct engine_slots {
  std::map<std::int32_t, std::string> held;
  bool limited = false;
  std::set<std::string> copies;
  std::deque<std::string> stages;  // asked for, not yet answered
  test::starts_seen starts;        // each sequence's slot

  engine_slots() = default;
  explicit engine_slots(const msg::engine_ready& r)
      : limited(r.lora_host_capacity > 0),
        copies(r.lora_host_adapters.begin(), r.lora_host_adapters.end()) {}

  void check(const msg::step_plan& p, const std::map<msg::request_id, std::string>& adapter_of) {
    for (const msg::lora_load& l : p.lora_loads) {
      INFO("step " << p.step << " loads '" << l.adapter << "' into slot " << l.slot);
      if (limited) REQUIRE(copies.count(l.adapter));
      held[l.slot] = l.adapter;
    }
    starts.on_plan(p);
    for (const msg::plan_row& row : p.rows) {
      const std::string& want = adapter_of.at(row.seq);
      const std::int32_t slot = starts.of(row.seq).lora_slot;
      INFO("step " << p.step << ", sequence " << row.seq << ", adapter '" << want << "'");
      if (want.empty()) {
        REQUIRE(slot == -1);
      } else {
        REQUIRE(slot >= 0);
        REQUIRE(held.count(slot));
        REQUIRE(held.at(slot) == want);
      }
    }
  }
  void failed(const msg::step_plan& p) {
    for (const msg::lora_load& l : p.lora_loads) held.erase(l.slot);
  }
  // What the scheduler asks of the engine's host copies, done in order.
  void changes(actors::scheduler_core& core) {
    for (const msg::lora_change& c : core.take_lora_host_changes()) {
      INFO("'" << c.name << "'");
      REQUIRE(limited);
      if (c.op == msg::lora_change::stage) {
        REQUIRE_FALSE(copies.count(c.name));
        stages.push_back(c.name);
      } else {
        REQUIRE(c.op == msg::lora_change::evict);
        REQUIRE(copies.erase(c.name) == 1);
      }
    }
  }
  // Answers the oldest stage: read (ok), or its folder could not be read.
  void answer(actors::scheduler_core& core, bool ok, std::vector<outgoing_event>& out) {
    const std::string name = stages.front();
    stages.pop_front();
    if (ok) copies.insert(name);
    core.lora_staged(name, ok, "injected: the folder is gone", out);
    changes(core);
  }
};

void run_random(unsigned seed) {
  std::mt19937 rng(seed);
  actors::scheduler_options o;
  o.overlap = false;
  o.max_batched_tokens = 64;
  const std::int32_t slots = 1 + static_cast<std::int32_t>(rng() % 3);
  const auto host_copies = static_cast<std::int32_t>(rng() % 4);  // 0: all
  const msg::engine_ready ready = ready_with_loras(20, slots, host_copies);
  actors::scheduler_core core(o, ready);
  test::core_events ev;
  engine_slots engine(ready);
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
    } else if (r == 4 && !engine.stages.empty()) {
      engine.answer(core, rng() % 8 != 0, out);
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
    engine.changes(core);
    ev.take(out);
    core.check_invariants();
  }
  // Drain: no more failures.
  for (int i = 0; i < 10000; ++i) {
    while (!engine.stages.empty()) engine.answer(core, true, out);
    auto plan = core.plan(out);
    ev.take(out);
    if (plan) engine.check(*plan, adapter_of);
    engine.changes(core);  // stages asked for by this plan's admissions
    if (!plan) {
      if (engine.stages.empty()) break;
      continue;
    }
    core.on_result(test::fake_engine(*plan), out);
    ev.take(out);
    core.check_invariants();
  }
  INFO("seed " << seed << ", " << slots << " slots, " << host_copies << " host copies, "
               << failed_steps << " failed steps");
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
  d.core.load_done("a", true, 21);
  const std::uint64_t loads = d.core.stats().lora_loads;
  msg::submit again = test::fake_request(4, 20, 6, true);
  again.adapter = "a";
  d.submit(again);
  d.run();
  CHECK(d.last.at(4).finish == msg::finish_reason::length);
  CHECK(d.core.stats().lora_loads == loads + 1);
  // A load the engine failed leaves the name free and unusable.
  REQUIRE(d.core.begin_load("b2").ok);
  d.core.load_done("b2", false, 0);
  msg::submit b2 = test::fake_request(5, 20, 6, true);
  b2.adapter = "b2";
  d.submit(b2);
  CHECK(d.last.at(5).error == msg::error_code::invalid_request);
  CHECK(d.core.begin_load("b2").ok);
}

// Runs plans until idle, noting the step of each sequence's first row and checking each row's
// slot as the engine holds it.
std::map<msg::request_id, int> first_rows(test::core_driver& d,
                                          const std::map<msg::request_id, std::string>& adapter_of,
                                          const std::function<void(int)>& before_step = {},
                                          engine_slots* shared = nullptr) {
  std::map<msg::request_id, int> first;
  engine_slots local;
  engine_slots& engine = shared ? *shared : local;
  std::vector<outgoing_event> out;
  for (int step = 0; step < 10000; ++step) {
    if (before_step) before_step(step);
    auto plan = d.core.plan(out);
    d.take(out);
    if (plan) engine.check(*plan, adapter_of);
    engine.changes(d.core);
    if (!plan) {
      if (engine.stages.empty()) break;
      continue;  // before_step answers
    }
    for (const auto& row : plan->rows) first.emplace(row.seq, step);
    d.core.on_result(test::fake_engine(*plan), out);
    d.take(out);
    d.core.check_invariants();
  }
  return first;
}

TEST_CASE(
    "lora slots: a request waiting for a slot lets the base and adapters already in a slot "
    "go ahead, but not the adapter whose slot it waits for",
    "[scheduler][lora]") {
  actors::scheduler_options o;
  o.overlap = false;
  test::core_driver d(o, ready_with_loras(256, 2));
  // 1 (a, long) and 2 (c) take both slots; 3 (b) waits for one: a's, the least recently used
  // of the two held by one sequence each. 4 (the base) and 5 (c, in a slot) go ahead of it;
  // 6 (a) would keep a's slot from emptying, so it waits behind 3.
  const std::map<msg::request_id, std::string> adapter_of = {
      {1, "a"}, {2, "c"}, {3, "b"}, {4, ""}, {5, "c"}, {6, "a"}};
  const std::map<msg::request_id, int> tokens = {{1, 12}, {2, 40}, {3, 4},
                                                 {4, 4},  {5, 4},  {6, 4}};
  for (const auto& [id, adapter] : adapter_of) {
    msg::submit s = test::fake_request(id, 16, tokens.at(id), true);
    s.adapter = adapter;
    d.submit(s);
  }
  const std::map<msg::request_id, int> first = first_rows(d, adapter_of);
  for (const auto& [id, adapter] : adapter_of) {
    INFO("request " << id);
    REQUIRE(d.last.count(id));
    CHECK(d.last.at(id).finish == msg::finish_reason::length);
    CHECK(d.tokens.at(id) == test::expected_tokens(id, 16, tokens.at(id)));
  }
  CHECK(first.at(4) == 0);  // the base, with 1 and 2
  CHECK(first.at(5) == 0);  // joins c's slot
  CHECK(first.at(3) > 0);   // once 1 is done with a's slot
  CHECK(first.at(3) < first.at(2) + 40);  // not after c's slot too
  CHECK(first.at(6) > first.at(3));       // a waited behind 3
  CHECK(d.core.stats().lora_passed == 2);
  CHECK(d.core.stats().lora_slots_in_use == 0);
}

TEST_CASE(
    "lora slots: requests for the adapter in the only slot, arriving every step, do not "
    "starve a request waiting for another adapter",
    "[scheduler][lora]") {
  actors::scheduler_options o;
  o.overlap = false;
  test::core_driver d(o, ready_with_loras(512, 1));
  std::map<msg::request_id, std::string> adapter_of;
  msg::request_id next = 1;
  const auto submit = [&](const std::string& adapter) {
    msg::submit s = test::fake_request(next, 8, 6, true);
    s.adapter = adapter;
    adapter_of[next] = adapter;
    d.submit(s);
    return next++;
  };
  submit("a");
  msg::request_id waiter = 0;
  std::vector<msg::request_id> after;  // a's requests that arrived after the waiter
  const std::map<msg::request_id, int> first = first_rows(d, adapter_of, [&](int step) {
    if (step == 2) waiter = submit("b");
    if (step >= 1 && step < 60) {
      const msg::request_id id = submit("a");
      if (waiter) after.push_back(id);
    }
  });
  REQUIRE(waiter != 0);
  REQUIRE(first.count(waiter));
  for (const msg::request_id id : after) {
    INFO("request " << id << " (a) arrived after " << waiter << " (b)");
    REQUIRE(first.count(id));
    CHECK(first.at(id) > first.at(waiter));
  }
  for (const auto& [id, adapter] : adapter_of) {
    INFO("request " << id);
    CHECK(d.tokens.at(id) == test::expected_tokens(id, 8, 6));
  }
}

TEST_CASE(
    "lora host copies: with room for one, an adapter without a copy waits while the engine "
    "reads it again and the base goes ahead; the least recently used copy is dropped; a read "
    "that fails fails only its adapter's waiting requests",
    "[scheduler][lora]") {
  actors::scheduler_options o;
  o.overlap = false;
  const msg::engine_ready ready = ready_with_loras(256, 2, 1);  // only a has a copy
  test::core_driver d(o, ready);
  engine_slots engine(ready);
  std::map<msg::request_id, std::string> adapter_of = {{1, "a"}, {2, "b"}, {3, ""}};
  const auto submit = [&](msg::request_id id, int tokens) {
    msg::submit s = test::fake_request(id, 16, tokens, true);
    s.adapter = adapter_of.at(id);
    d.submit(s);
  };
  submit(1, 8);
  submit(2, 4);
  submit(3, 4);
  std::vector<outgoing_event> out;
  for (int step = 0; step < 2; ++step) {  // b is being read: 1 and 3 run, 2 waits
    auto plan = d.core.plan(out);
    d.take(out);
    REQUIRE(plan);
    engine.check(*plan, adapter_of);
    engine.changes(d.core);
    std::set<msg::request_id> rows;
    for (const auto& row : plan->rows) rows.insert(row.seq);
    CHECK(rows == std::set<msg::request_id>{1, 3});
    d.core.on_result(test::fake_engine(*plan), out);
    d.take(out);
    d.core.check_invariants();
  }
  REQUIRE(engine.stages == std::deque<std::string>{"b"});  // asked once
  engine.answer(d.core, true, out);
  CHECK(engine.copies == std::set<std::string>{"b"});  // a's went: the least recently used
  first_rows(d, adapter_of, {}, &engine);
  for (msg::request_id id = 1; id <= 3; ++id) {
    INFO("request " << id);
    CHECK(d.last.at(id).finish == msg::finish_reason::length);
  }
  CHECK(d.tokens.at(2) == test::expected_tokens(2, 16, 4));
  // a is still in its slot: no copy needed, nothing read.
  adapter_of[4] = "a";
  submit(4, 4);
  first_rows(d, adapter_of, {}, &engine);
  CHECK(d.last.at(4).finish == msg::finish_reason::length);
  CHECK(d.core.stats().lora_host_stages == 1);
  CHECK(d.core.stats().lora_host_evictions == 1);
  // c's folder cannot be read: its waiting requests fail, the rest go on.
  adapter_of[5] = "c";
  adapter_of[6] = "c";
  adapter_of[7] = "";
  submit(5, 4);
  submit(6, 4);
  submit(7, 4);
  auto plan = d.core.plan(out);
  d.take(out);
  REQUIRE(plan);
  engine.check(*plan, adapter_of);
  engine.changes(d.core);
  REQUIRE(engine.stages == std::deque<std::string>{"c"});
  engine.answer(d.core, false, out);
  d.take(out);
  for (msg::request_id id = 5; id <= 6; ++id) {
    INFO("request " << id);
    REQUIRE(d.last.count(id));
    CHECK(d.last.at(id).error == msg::error_code::engine_failure);
    CHECK_THAT(d.last.at(id).message, Catch::Matchers::Contains("'c' could not be read again") &&
                                          Catch::Matchers::Contains("the folder is gone"));
  }
  d.core.on_result(test::fake_engine(*plan), out);
  d.take(out);
  first_rows(d, adapter_of, {}, &engine);
  CHECK(d.last.at(7).finish == msg::finish_reason::length);
  // A later request reads it again; b's copy goes (a has none, c is the newest).
  adapter_of[8] = "c";
  submit(8, 4);
  first_rows(d, adapter_of,
             [&](int) {
               if (!engine.stages.empty()) engine.answer(d.core, true, out);
             },
             &engine);
  CHECK(d.last.at(8).finish == msg::finish_reason::length);
  CHECK(d.tokens.at(8) == test::expected_tokens(8, 16, 4));
  CHECK(d.core.stats().lora_host_stages == 3);
  CHECK(d.core.stats().lora_host_evictions == 2);
  CHECK(d.core.stats().lora_slots_in_use == 0);
}

}  // namespace courier_test_actors_scheduler_lora_core
