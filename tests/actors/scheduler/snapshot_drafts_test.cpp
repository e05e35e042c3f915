// A hybrid verifying drafts (prompt lookup) in the scheduler core, against a model of the
// device's state rows as the engine keeps them: a row's state takes in every token it is fed,
// rejected drafts included; a snapshot copies the row's state at its end (drafts and all); then
// the state after the last accepted position is put back in the sequence's slot
// (select_draft_states). Every row must find the state of exactly the tokens before it, so a
// snapshot kept from a row whose drafts were rejected (it holds tokens that never were) fails
// here when a later request restores it, as would a step with more drafts than draft rows.
#include <catch2/catch.hpp>

#include <deque>
#include <map>
#include <random>

#include "tests/support/scheduler_core_driver.hpp"
#include "tests/support/state_device_model.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_snapshot_drafts {

using namespace courier;
using actors::outgoing_event;
using actors::scheduler_options;

namespace {

using test::fold;
using test::fresh_state;

// Tokens from {10, 11, 12} by a hash of (sequence, position): two-token suffixes recur, and
// what followed them last time is right about a third of the time, so drafts come often and
// are rejected often.
msg::token_id model(msg::request_id s, std::int32_t pos) {
  std::uint64_t z = s * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(pos);
  z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ULL;
  return static_cast<msg::token_id>(10 + (z ^ (z >> 29)) % 3);
}

struct state_device {
  std::map<std::int32_t, std::uint64_t> rows;  // state row -> hash of what it took in
  std::map<msg::request_id, std::vector<msg::token_id>> prompts;
  std::int32_t draft_rows = 0;
  int restores = 0;
  int lost_snapshots = 0;  // taken at the end of a row whose drafts were not all accepted
  test::starts_seen starts;

  msg::token_id token_at(msg::request_id seq, std::int32_t pos) const {
    const auto& p = prompts.at(seq);
    return pos < static_cast<std::int32_t>(p.size()) ? p[static_cast<std::size_t>(pos)]
                                                     : model(seq, pos);
  }
  std::uint64_t hash_of(msg::request_id seq, std::int32_t n) const {
    std::uint64_t h = fresh_state;
    for (std::int32_t i = 0; i < n; ++i) h = fold(h, token_at(seq, i));
    return h;
  }

  void run(const msg::step_plan& p, const msg::step_result& r) {
    starts.on_plan(p);
    std::int32_t drafts = 0;
    for (std::size_t i = 0; i < p.rows.size(); ++i) {
      const msg::plan_row& row = p.rows[i];
      INFO("step " << p.step << ", sequence " << row.seq << " from " << row.start_pos);
      drafts += row.num_drafts;
      std::uint64_t& s = rows[starts.of(row.seq).state_slot];
      const std::int32_t restore = starts.restore(row.seq);
      if (restore >= 0) {
        REQUIRE(rows.count(restore));
        s = rows[restore];
        ++restores;
      } else if (row.start_pos == 0) {
        s = fresh_state;
      }
      REQUIRE(s == hash_of(row.seq, row.start_pos));  // the state of exactly its prefix
      const auto n = static_cast<std::int32_t>(row.tokens.size());
      std::vector<std::uint64_t> after;  // the state after each of the row's tokens, as fed
      for (std::int32_t j = 0; j < n; ++j) {
        const msg::token_id fed = row.follows && j == 0 ? token_at(row.seq, row.start_pos)
                                                        : row.tokens[static_cast<std::size_t>(j)];
        if (j < n - row.num_drafts) REQUIRE(fed == token_at(row.seq, row.start_pos + j));
        s = fold(s, fed);
        after.push_back(s);
      }
      const auto accepted = row.num_drafts > 0
                                ? static_cast<std::int32_t>(r.rows[i].tokens.size()) - 1
                                : 0;
      if (row.state_snapshot >= 0) {
        rows[row.state_snapshot] = s;
        if (accepted < row.num_drafts) ++lost_snapshots;
      }
      s = after[static_cast<std::size_t>(n - 1 - row.num_drafts + accepted)];
    }
    REQUIRE(drafts <= draft_rows);
  }
};

}  // namespace

TEST_CASE("snapshot core: a hybrid verifying drafts finds the state of exactly its prefix at "
          "every row, and keeps a snapshot only where every draft of its row stood",
          "[scheduler]") {
  int lost = 0;
  std::uint64_t tail_hits = 0;
  for (const bool overlap : {false, true}) {
    for (const std::int32_t draft_rows : {3, 64}) {
      INFO("overlap " << overlap << ", " << draft_rows << " draft rows");
      scheduler_options o;
      o.overlap = overlap;
      o.max_batched_tokens = 64;
      o.ssm_checkpoint_tokens = 32;
      o.lookup.enabled = true;
      o.lookup.num_draft = 6;
      msg::engine_ready ready = test::fake_hybrid_ready(400, 4, 24);
      ready.draft_state_rows = draft_rows;
      actors::scheduler_core core(o, ready);
      test::core_events ev;
      state_device dev;
      dev.draft_rows = draft_rows;
      std::mt19937 rng(static_cast<unsigned>(draft_rows + overlap));
      std::map<msg::request_id, int> want_out;
      std::vector<msg::request_id> submitted;
      std::vector<outgoing_event> out;
      std::deque<std::pair<msg::step_plan, msg::step_result>> flights;
      msg::request_id next_id = 1;
      for (int wave = 0; wave < 5; ++wave) {
        for (int i = 0; i < 6; ++i) {
          msg::submit s;
          s.id = next_id++;
          if (!submitted.empty() && rng() % 3 != 0) {  // the next turn of a conversation
            const msg::request_id prev = submitted[rng() % submitted.size()];
            s.prompt = dev.prompts.at(prev);
            const auto len = static_cast<std::int32_t>(s.prompt.size());
            for (int k = 0; k < want_out[prev]; ++k) s.prompt.push_back(model(prev, len + k));
          }
          for (int k = 0; k < 1 + static_cast<int>(rng() % 20); ++k) {
            s.prompt.push_back(10 + rng() % 3);
          }
          if (s.prompt.size() > 300) s.prompt.erase(s.prompt.begin(), s.prompt.end() - 300);
          s.max_tokens = 10 + static_cast<int>(rng() % 40);
          s.ignore_eos = true;
          dev.prompts[s.id] = s.prompt;
          want_out[s.id] = s.max_tokens;
          submitted.push_back(s.id);
          core.submit(s, out);
          ev.take(out);
        }
        for (;;) {
          while (auto p = core.plan(out)) {
            ev.take(out);
            core.check_invariants();
            msg::step_result r = test::verify_drafts(*p, model);
            dev.run(*p, r);
            flights.emplace_back(std::move(*p), std::move(r));
          }
          if (flights.empty()) break;
          core.on_result(std::move(flights.front().second), out);
          flights.pop_front();
          ev.take(out);
          core.check_invariants();
        }
      }
      for (const auto& [id, n] : want_out) {
        INFO("request " << id);
        const auto len = static_cast<std::int32_t>(dev.prompts[id].size());
        std::vector<msg::token_id> want;
        for (int k = 0; k < n; ++k) want.push_back(model(id, len + k));
        CHECK(ev.tokens[id] == want);
      }
      const msg::scheduler_stats st = core.stats();
      CHECK(st.spec_accepted_own > 0);
      CHECK(st.spec_accepted_own < st.spec_draft_tokens_own);
      CHECK(dev.restores > 0);
      lost += dev.lost_snapshots;
      tail_hits += st.snapshot_hits_tail;
      core.evict_all_cached();
      CHECK(core.stats().num_free_blocks == 400);
    }
  }
  CHECK(lost > 0);  // rows with drafts ended at block boundaries, and some drafts fell
  CHECK(tail_hits > 0);
}

}  // namespace courier_test_actors_scheduler_snapshot_drafts
