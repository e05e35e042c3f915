// A hybrid model's snapshot cache in the scheduler core, against a model of the device's state
// rows: each row's recurrent state is a hash of the tokens it took in, the plan's restores and
// snapshots copy rows as the engine does (in plan order, as the stream runs them), and every
// row must find, before it runs, the state of exactly the tokens before its start position. So
// a snapshot restored for the wrong prefix, one overwritten while still in use, a spill or
// promotion copied out of order, or a resume without a snapshot fails here, through overlap,
// chunking, eviction, the host tier, preemption and cancellation.
#include <catch2/catch.hpp>

#include <deque>
#include <map>
#include <random>

#include "tests/support/scheduler_core_driver.hpp"
#include "tests/support/state_device_model.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_snapshot_core {

using namespace courier;
using actors::outgoing_event;
using actors::scheduler_options;

namespace {

using test::state_device;

msg::engine_ready hybrid_ready(std::int32_t blocks, std::int32_t state_slots,
                               std::int32_t snapshot_slots, std::int32_t host_slots = 0) {
  return test::fake_hybrid_ready(blocks, state_slots, snapshot_slots, host_slots);
}

}  // namespace

TEST_CASE("snapshot core: every row of a hybrid finds the state of exactly its prefix, through "
          "resumes, overlap, chunking, eviction, preemption and cancellation",
          "[scheduler]") {
  std::uint64_t hits = 0, kinds_seen = 0, spilled_hits = 0;
  for (const bool overlap : {false, true}) {
    for (const int blocks : {16, 400}) {
      for (const auto& [snaps, host_rows] : {std::pair<int, int>{2, 0}, {2, 6}, {12, 0}}) {
        INFO("overlap " << overlap << ", " << blocks << " blocks, " << snaps
                        << " snapshot rows, " << host_rows << " host rows");
        scheduler_options o;
        o.overlap = overlap;
        o.max_batched_tokens = 40;
        o.ssm_checkpoint_tokens = 32;
        test::core_events ev;
        actors::scheduler_core core(o, hybrid_ready(blocks, 4, snaps, host_rows));
        state_device dev;
        std::mt19937 rng(static_cast<unsigned>(blocks + snaps + overlap));
        std::vector<msg::token_id> doc;
        for (int i = 0; i < 120; ++i) doc.push_back(rng() % 500);
        std::map<msg::request_id, int> want_out;
        std::vector<outgoing_event> out;
        std::deque<msg::step_plan> flights;
        std::vector<msg::request_id> submitted;
        msg::request_id next_id = 1;
        for (int wave = 0; wave < 4; ++wave) {
          for (int i = 0; i < 6; ++i) {
            msg::submit s;
            s.id = next_id++;
            const unsigned shape = rng() % 3;
            if (shape == 0 || submitted.empty()) {  // a share of the document and a question
              s.prompt.assign(doc.begin(), doc.begin() + 8 + rng() % 110);
            } else if (shape == 1) {  // an earlier request's conversation, and a new message
              const msg::request_id prev = submitted[rng() % submitted.size()];
              s.prompt = dev.prompts.at(prev);
              const auto len = static_cast<std::int32_t>(s.prompt.size());
              for (int k = 0; k < want_out[prev]; ++k) s.prompt.push_back(test::next_token(prev, len + k));
            } else {  // an earlier prompt again
              s.prompt = dev.prompts.at(submitted[rng() % submitted.size()]);
            }
            for (int k = 0; k < 1 + static_cast<int>(rng() % 9); ++k) s.prompt.push_back(rng() % 500);
            if (s.prompt.size() > 200) s.prompt.resize(200);
            s.max_tokens = 5 + static_cast<int>(rng() % 30);
            s.ignore_eos = true;
            dev.prompts[s.id] = s.prompt;
            want_out[s.id] = s.max_tokens;
            submitted.push_back(s.id);
            core.submit(s, out);
            ev.take(out);
          }
          int step = 0;
          for (;;) {
            while (auto p = core.plan(out)) {
              ev.take(out);
              core.check_invariants();
              dev.run(*p);
              flights.push_back(std::move(*p));
            }
            if (flights.empty()) break;
            core.on_result(test::fake_engine(flights.front()), out);
            flights.pop_front();
            ev.take(out);
            core.check_invariants();
            if (++step % 7 == 0 && wave == 2) {  // cancel something now and then
              std::vector<outgoing_event> o2;
              core.cancel(1 + rng() % (next_id - 1), o2);
              ev.take(o2);
              core.check_invariants();
            }
          }
        }
        for (const auto& [id, n] : want_out) {
          INFO("request " << id);
          const auto& got = ev.tokens[id];
          const auto want = test::expected_tokens(id, static_cast<int>(dev.prompts[id].size()), n);
          if (ev.last[id].finish == msg::finish_reason::cancelled) {
            CHECK(std::equal(got.begin(), got.end(), want.begin()));
          } else {
            CHECK(got == want);
          }
        }
        const msg::scheduler_stats st = core.stats();
        CHECK(st.cached_tokens > 0);
        CHECK(dev.restores > 0);
        CHECK(st.num_snapshots <= snaps);
        spilled_hits += st.snapshot_hits_spilled;
        if (host_rows == 0) CHECK(st.snapshot_hits_spilled == 0);
        hits += st.snapshot_hits_exact + st.snapshot_hits_intermediate + st.snapshot_hits_branch +
                st.snapshot_hits_tail;
        kinds_seen |= (st.snapshot_hits_exact > 0) | (st.snapshot_hits_intermediate > 0) << 1 |
                      (st.snapshot_hits_branch > 0) << 2 | (st.snapshot_hits_tail > 0) << 3;
        if (blocks == 16) CHECK(st.num_preemptions > 0);
        core.evict_all_cached();
        CHECK(core.stats().num_free_blocks == blocks);
        CHECK(core.stats().num_snapshots == 0);
      }
    }
  }
  CHECK(hits > 0);
  CHECK(kinds_seen == 15);  // every kind of hit happened
  CHECK(spilled_hits > 0);  // and hits on snapshots brought back from the host tier
}

TEST_CASE("scheduler core: when sequences part-way through their prompts find no block free, "
          "the newest without a row in the plan is preempted, and every request ends",
          "[scheduler]") {
  // A hybrid's prompt chunks end at its checkpoints and ask for blocks step by step: with 10
  // blocks and 15 sequences they run out while no sequence decodes (before the fix, a hang).
  // The Llama case, prompts chunked by a small budget, runs the same path.
  for (const bool recurrent : {false, true}) {
    INFO((recurrent ? "hybrid" : "llama"));
    msg::engine_ready r =
        recurrent ? hybrid_ready(10, 256, 512) : test::fake_engine_ready(10);
    scheduler_options o;
    o.overlap = true;
    o.max_batched_tokens = recurrent ? 2048 : 24;
    test::core_driver d(o, r);
    std::mt19937 rng(6);
    std::map<msg::request_id, std::pair<int, int>> shape;
    for (msg::request_id id = 1; id <= 15; ++id) {
      const int len = 17 + static_cast<int>(rng() % 14), out = 50 + static_cast<int>(rng() % 50);
      shape[id] = {len, out};
      d.submit(test::fake_request(id, len, out, true));
    }
    const int steps = d.run([](int n) { return n > 20000; });
    CHECK(steps < 20000);
    for (auto& [id, lo] : shape) {
      CHECK(d.tokens[id] == test::expected_tokens(id, lo.first, lo.second));
    }
    CHECK(d.core.stats().num_preemptions > 0);
  }
}

TEST_CASE("snapshot core: a hybrid without snapshot rows reuses no prefix", "[scheduler]") {
  scheduler_options o;
  test::core_events ev;
  actors::scheduler_core core(o, hybrid_ready(100, 2, 0));
  std::vector<outgoing_event> out;
  for (msg::request_id id = 1; id <= 3; ++id) {
    core.submit(test::fake_request(id, 40, 3, true), out);
  }
  while (auto p = core.plan(out)) {
    for (const auto& st : p->starts) CHECK(st.state_restore == -1);
    for (const auto& row : p->rows) CHECK(row.state_snapshot == -1);
    core.on_result(test::fake_engine(*p), out);
  }
  CHECK(core.stats().cached_tokens == 0);
}

}  // namespace courier_test_actors_scheduler_snapshot_core
