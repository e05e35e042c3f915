// Planning ahead (scheduler.overlap): the scheduler plans step N + 1 while step N runs, and the
// engine's sequence_table feeds each following row the token N sampled for its sequence (from the
// sequence's next-token slot, which N wrote after sampling, as the device does). The fake model's
// next token depends on the token fed, so a row fed anything but the right token (the
// placeholder, or another step's sample) changes the output, which is checked exactly.
#include <catch2/catch.hpp>

#include <deque>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "actors/engine/sequence_table.hpp"
#include "actors/scheduler/scheduler_core.hpp"
#include "tests/support/fake_engine_ready.hpp"
#include "tests/support/scheduler_core_driver.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_overlap_core {

using namespace courier;
using actors::outgoing_event;
using actors::scheduler_core;
using actors::scheduler_options;

namespace {

constexpr msg::token_id eos = 999;

// The fake model: the token after position pos of sequence s, given the token fed there. With
// `eos_every` > 0 it ends a sequence now and then; with `cycle`, a token of the cycle 10..16 is
// followed by the next one (so a sequence's own history drafts it right).
struct fake_model {
  int eos_every = 0;
  bool cycle = false;
  msg::token_id operator()(msg::request_id s, std::int32_t pos, msg::token_id fed) const {
    if (cycle && fed >= 10 && fed < 17) return 10 + (fed - 9) % 7;
    std::uint64_t z = s * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(pos) * 131 + fed;
    z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ULL;
    z ^= z >> 29;
    if (eos_every > 0 && z % static_cast<std::uint64_t>(eos_every) == 0) return eos;
    return static_cast<msg::token_id>(z % 900);
  }
};

// What decoding one token at a time gives.
std::vector<msg::token_id> expected(const fake_model& m, const msg::submit& s) {
  std::vector<msg::token_id> out;
  msg::token_id fed = s.prompt.back();
  auto pos = static_cast<std::int32_t>(s.prompt.size()) - 1;
  while (static_cast<std::int32_t>(out.size()) < s.max_tokens) {
    const msg::token_id t = m(s.id, pos++, fed);
    out.push_back(t);
    if (t == eos && !s.ignore_eos) break;
    fed = t;
  }
  return out;
}

msg::submit request(msg::request_id id, int prompt_len, int max_tokens, bool ignore_eos) {
  msg::submit s;
  s.id = id;
  for (int i = 0; i < prompt_len; ++i) s.prompt.push_back(static_cast<msg::token_id>(i * 7 % 500));
  s.max_tokens = max_tokens;
  s.ignore_eos = ignore_eos;
  return s;
}

// The scheduler and an engine in one thread: plans queue as in the engine's mailbox and run in
// order, each through a sequence_table as the engine actor does; `device_slots` is the device's
// next-token slots, which following rows are fed from.
struct driver {
  scheduler_core core;
  fake_model model;
  actors::sequence_table seqs{512};  // the engine's; slots: twice scheduler.max_num_seqs
  std::deque<msg::step_plan> queue;
  std::vector<msg::token_id> device_slots = std::vector<msg::token_id>(512, 0);
  // The device's penalty lists, by slot: (in prompt, output count) by token.
  using penalty_map = std::map<msg::token_id, std::pair<bool, int>>;
  std::vector<penalty_map> device_lists = std::vector<penalty_map>(512);
  std::map<msg::request_id, msg::submit> submitted;
  int penalised_rows = 0, penalised_follows = 0;
  std::map<msg::request_id, std::vector<msg::token_id>> tokens;
  std::map<msg::request_id, msg::token_event> last;
  std::map<msg::request_id, int> finals;  // final events per request: exactly one each
  int steps = 0, times_two_in_flight = 0, rows_not_run = 0;
  test::engine_tables_check engine_tables;

  driver(scheduler_options o, msg::engine_ready r, fake_model m = {}) : core(o, r), model(m) {}

  void take(std::vector<outgoing_event>& out) {
    for (auto& e : out) {
      auto& t = tokens[e.event.id];
      t.insert(t.end(), e.event.tokens.begin(), e.event.tokens.end());
      if (e.event.finish != msg::finish_reason::none) {
        last[e.event.id] = e.event;
        ++finals[e.event.id];
      }
    }
    out.clear();
  }
  void submit(msg::submit s) {
    submitted[s.id] = s;
    std::vector<outgoing_event> out;
    core.submit(std::move(s), out);
    take(out);
  }
  // What a penalised sequence's list must hold when it samples output token k: its prompt, and
  // the first k tokens of its one-at-a-time output, counted here.
  penalty_map want_penalties(msg::request_id id, std::uint64_t k) const {
    const msg::submit& s = submitted.at(id);
    penalty_map want;
    for (const msg::token_id t : s.prompt) want[t].first = true;
    const std::vector<msg::token_id> out = expected(model, s);
    for (std::uint64_t j = 0; j < k && j < out.size(); ++j) ++want[out[j]].second;
    return want;
  }
  void cancel(msg::request_id id) {
    std::vector<outgoing_event> out;
    core.cancel(id, out);
    take(out);
  }
  // Plans while the scheduler allows, as its actor does after every message.
  void plan_all() {
    std::vector<outgoing_event> out;
    while (auto p = core.plan(out)) {
      core.check_invariants();
      engine_tables.on_plan(*p, core);
      queue.push_back(std::move(*p));
    }
    take(out);
    if (queue.size() == 2) ++times_two_in_flight;
  }
  // The engine runs the oldest plan (or fails it) and the scheduler takes the result.
  void run_one(bool fail = false) {
    msg::step_plan p = std::move(queue.front());
    queue.pop_front();
    REQUIRE_FALSE(seqs.apply(p));
    const std::vector<actors::row_use> uses = seqs.resolve(p);
    REQUIRE(uses.size() == p.rows.size());
    for (const actors::row_use& u : uses) rows_not_run += u.runs ? 0 : 1;
    msg::step_result r;
    r.step = p.step;
    if (fail) {  // the launch fails: nothing sampled, nothing to feed from
      r.error = msg::error_code::engine_failure;
      r.message = "injected";
    } else {
      seqs.launched(p, uses);
      std::vector<std::pair<std::int32_t, msg::token_id>> writes;  // after the step's sampling
      std::vector<std::pair<std::int32_t, msg::token_id>> counts;  // likewise
      for (std::size_t i = 0; i < p.rows.size(); ++i) {
        msg::plan_row& row = p.rows[i];
        msg::row_result rr;
        rr.seq = row.seq;
        if (!uses[i].runs) {  // nothing to feed it: an error, as the engine answers
          rr.error = msg::error_code::engine_failure;
          r.rows.push_back(rr);
          continue;
        }
        REQUIRE((!row.follows || (row.tokens.size() == 1 && uses[i].read >= 0)));
        if (uses[i].read >= 0) row.tokens[0] = device_slots[static_cast<std::size_t>(uses[i].read)];
        const actors::sequence_record& rec = *seqs.find(row.seq);
        if (row.sample && msg::penalised(rec.sampling)) {  // samples with its device list
          REQUIRE(uses[i].penalties >= 0);
          REQUIRE(row.num_drafts == 0);
          penalty_map& list = device_lists[static_cast<std::size_t>(uses[i].penalties)];
          if (uses[i].penalty_init) {
            list.clear();
            for (const msg::penalty_entry& e : rec.start.penalties) {
              list[e.token] = {e.in_prompt, e.output_count};
            }
          }
          INFO("sequence " << row.seq << " samples output " << row.draw_index);
          CHECK(list == want_penalties(row.seq, row.draw_index));
          ++penalised_rows;
          if (row.follows) ++penalised_follows;
        } else {
          CHECK((uses[i].penalties < 0 && !uses[i].penalty_init));
        }
        if (row.sample) {  // position j is sampled; drafts stand while they equal the samples
          const auto n = static_cast<std::int32_t>(row.tokens.size());
          bool standing = true;
          for (std::int32_t j = n - 1 - row.num_drafts; j < n; ++j) {
            const msg::token_id t = model(row.seq, row.start_pos + j, row.tokens[j]);
            if (uses[i].write >= 0) writes.emplace_back(uses[i].write, t);  // one sample only
            if (uses[i].penalties >= 0) counts.emplace_back(uses[i].penalties, t);
            if (standing) rr.tokens.push_back(t);
            standing = standing && j + 1 < n && row.tokens[static_cast<std::size_t>(j + 1)] == t;
          }
        }
        r.rows.push_back(rr);
      }
      for (const auto& [slot, t] : writes) device_slots[static_cast<std::size_t>(slot)] = t;
      for (const auto& [slot, t] : counts) ++device_lists[static_cast<std::size_t>(slot)][t].second;
    }
    std::vector<outgoing_event> out;
    core.on_result(std::move(r), out);
    take(out);
    core.check_invariants();
    ++steps;
  }
  // Until idle; `between(step)` runs after each result.
  void run(const std::function<void(int)>& between = {}) {
    for (plan_all(); !queue.empty(); plan_all()) {
      run_one();
      if (between) between(steps);
    }
  }
};

scheduler_options overlap_on() {
  scheduler_options o;
  o.overlap = true;
  return o;
}

}  // namespace

TEST_CASE("overlap core: outputs are exact under chunking and preemption, two steps in flight",
          "[scheduler]") {
  for (int budget : {7, 64, 2048}) {
    for (int blocks : {12, 200}) {
      INFO("max_batched_tokens " << budget << ", " << blocks << " blocks");
      scheduler_options o = overlap_on();
      o.max_batched_tokens = budget;
      driver d(o, test::fake_engine_ready(blocks), fake_model{23});
      std::mt19937 rng(static_cast<unsigned>(budget * 7 + blocks));
      std::vector<msg::submit> reqs;
      for (msg::request_id id = 1; id <= 40; ++id) {
        reqs.push_back(request(id, 1 + static_cast<int>(rng() % 100),
                               1 + static_cast<int>(rng() % 60), id % 3 == 0));
        // Penalised ones sample with the list the engine keeps on the device (checked at each
        // of their rows against a count of their prompt and output so far), and follow too.
        if (id % 4 == 0) reqs.back().sampling.frequency_penalty = 0.5f;
        d.submit(reqs.back());
      }
      d.run();
      CHECK(d.penalised_rows > 0);
      CHECK(d.penalised_follows > 0);
      for (const auto& s : reqs) {
        INFO("request " << s.id);
        const auto want = expected(d.model, s);
        CHECK(d.tokens[s.id] == want);
        CHECK(d.finals[s.id] == 1);
        const bool stopped = !s.ignore_eos && want.back() == eos;
        CHECK(d.last[s.id].finish ==
              (stopped ? msg::finish_reason::stop : msg::finish_reason::length));
      }
      const auto st = d.core.stats();
      CHECK(st.follow_rows > 0);
      CHECK(d.times_two_in_flight > 0);
      CHECK(d.rows_not_run == 0);  // no step failed, so every following row had its token
      if (blocks == 12) CHECK(st.num_preemptions > 0);
      d.core.evict_all_cached();
      CHECK(d.core.stats().num_free_blocks == blocks);
    }
  }
}

TEST_CASE("overlap core: without overlap one step is in flight and nothing follows",
          "[scheduler]") {
  driver d(scheduler_options{}, test::fake_engine_ready(200), fake_model{23});
  std::vector<msg::submit> reqs;
  for (msg::request_id id = 1; id <= 10; ++id) {
    reqs.push_back(request(id, 5 + static_cast<int>(id), 20, false));
    d.submit(reqs.back());
  }
  d.run();
  for (const auto& s : reqs) CHECK(d.tokens[s.id] == expected(d.model, s));
  CHECK(d.core.stats().follow_rows == 0);
  CHECK(d.times_two_in_flight == 0);
}

TEST_CASE("overlap core: a failed step fails its requests; rows following them are dropped",
          "[scheduler]") {
  driver d(overlap_on(), test::fake_engine_ready(200));
  std::vector<msg::submit> reqs;
  for (msg::request_id id = 1; id <= 6; ++id) {
    reqs.push_back(request(id, 10, 30, true));
    d.submit(reqs.back());
  }
  d.plan_all();
  for (int i = 0; i < 3; ++i) {  // all six decoding, with a following step queued
    d.run_one();
    d.plan_all();
  }
  REQUIRE(d.queue.size() == 2);
  std::set<msg::request_id> in_failed;
  for (const auto& row : d.queue.front().rows) in_failed.insert(row.seq);
  REQUIRE(in_failed.size() == 6);
  d.submit(request(7, 12, 30, true));  // arrives now: planned after the failure, not in it
  d.run_one(/*fail=*/true);
  d.run();
  CHECK(d.rows_not_run == 6);  // the queued step's rows followed the failed one
  for (msg::request_id id = 1; id <= 6; ++id) {
    CHECK(d.finals[id] == 1);
    CHECK(d.last[id].finish == msg::finish_reason::error);
  }
  CHECK(d.tokens[7] == expected(d.model, request(7, 12, 30, true)));
  CHECK(d.last[7].finish == msg::finish_reason::length);
  d.core.evict_all_cached();
  CHECK(d.core.stats().num_free_blocks == 200);
}

TEST_CASE("overlap core: cancels at random moments return every block", "[scheduler]") {
  for (int blocks : {14, 300}) {
    scheduler_options o = overlap_on();
    o.max_batched_tokens = 64;
    driver d(o, test::fake_engine_ready(blocks), fake_model{31});
    std::mt19937 rng(static_cast<unsigned>(blocks));
    std::vector<msg::submit> reqs;
    for (msg::request_id id = 1; id <= 30; ++id) {
      reqs.push_back(
          request(id, 1 + static_cast<int>(rng() % 80), 1 + static_cast<int>(rng() % 50), false));
      d.submit(reqs.back());
    }
    std::set<msg::request_id> cancelled;
    d.run([&](int) {
      if (rng() % 3 == 0) {
        const msg::request_id id = 1 + rng() % 30;
        if (!d.finals.count(id)) cancelled.insert(id);
        d.cancel(id);
      }
    });
    for (const auto& s : reqs) {
      INFO("request " << s.id);
      CHECK(d.finals[s.id] == 1);
      if (cancelled.count(s.id)) {
        CHECK(d.last[s.id].finish == msg::finish_reason::cancelled);
        const auto want = expected(d.model, s);
        CHECK(std::equal(d.tokens[s.id].begin(), d.tokens[s.id].end(), want.begin()));
      } else {
        CHECK(d.tokens[s.id] == expected(d.model, s));
      }
    }
    d.core.evict_all_cached();
    CHECK(d.core.stats().num_free_blocks == blocks);
  }
}

TEST_CASE("overlap core: prompt lookup still drafts, and drafts change no token", "[scheduler]") {
  scheduler_options o = overlap_on();
  o.lookup.enabled = true;
  o.lookup.num_draft = 4;
  o.lookup.shared.ngram.min_n = 2;
  o.lookup.shared.ngram.max_n = 4;
  fake_model cycle;
  cycle.cycle = true;
  driver d(o, test::fake_engine_ready(200), cycle);
  std::vector<msg::submit> reqs;
  for (msg::request_id id = 1; id <= 12; ++id) {
    msg::submit s = request(id, 30, 50, true);
    if (id <= 6) {  // the cycle; the others' drafts mostly fail, so their searches pause
      for (int i = 0; i < 30; ++i) s.prompt[static_cast<std::size_t>(i)] = 10 + i % 7;
    }
    reqs.push_back(s);
    d.submit(s);
  }
  d.run();
  for (const auto& s : reqs) CHECK(d.tokens[s.id] == expected(d.model, s));
  const auto st = d.core.stats();
  CHECK(st.spec_drafts > 0);
  CHECK(st.spec_accepted_own > 0);
  CHECK(st.follow_rows > 0);  // while a search pauses, the sequence's rows follow
  d.core.evict_all_cached();
  CHECK(d.core.stats().num_free_blocks == 200);
}

}  // namespace courier_test_actors_scheduler_overlap_core
