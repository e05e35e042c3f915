#pragma once
// The scheduler's policy without actors or a model, for its core tests: a fake model whose next
// token is a function of (sequence, position), so every output is known exactly, and a driver
// that steps a scheduler_core with it, collecting each request's tokens and final event and
// checking the core's invariants after every plan and every result.
#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "actors/engine/block_tables.hpp"
#include "actors/engine/sequence_sampling.hpp"
#include "actors/scheduler/scheduler_core.hpp"
#include "tests/support/fake_engine_ready.hpp"

namespace courier::test {

// The fake model: the token after position pos of sequence seq (never the EOS, 999).
inline msg::token_id next_token(msg::request_id seq, std::int32_t pos) {
  return static_cast<msg::token_id>((seq * 31 + static_cast<std::uint64_t>(pos) * 7) % 900);
}

// The fake model's `n` tokens after a prompt of prompt_len tokens.
inline std::vector<msg::token_id> expected_tokens(msg::request_id id, int prompt_len, int n) {
  std::vector<msg::token_id> v;
  for (int i = 0; i < n; ++i) v.push_back(next_token(id, prompt_len + i));
  return v;
}

// The engine's answer to rows that may verify drafts, for a fake model whose token after
// (sequence, position) is next(sequence, position + 1): position j of a row is sampled, and the
// drafts stand while they equal those samples.
using token_fn = std::function<msg::token_id(msg::request_id, std::int32_t)>;
inline msg::step_result verify_drafts(const msg::step_plan& p, const token_fn& next) {
  msg::step_result r;
  r.step = p.step;
  for (const auto& row : p.rows) {
    msg::row_result rr;
    rr.seq = row.seq;
    if (row.sample) {
      const auto n = static_cast<std::int32_t>(row.tokens.size());
      for (std::int32_t j = n - 1 - row.num_drafts; j < n; ++j) {
        const msg::token_id t = next(row.seq, row.start_pos + j + 1);
        rr.tokens.push_back(t);
        if (j + 1 >= n || row.tokens[static_cast<std::size_t>(j + 1)] != t) break;
      }
    }
    r.rows.push_back(rr);
  }
  return r;
}

// A step of the fake model: one token for each row that samples.
inline msg::step_result fake_engine(const msg::step_plan& p) {
  msg::step_result r;
  r.step = p.step;
  for (const auto& row : p.rows) {
    msg::row_result rr;
    rr.seq = row.seq;
    if (row.sample) {
      rr.tokens.push_back(next_token(row.seq, row.start_pos + static_cast<int>(row.tokens.size())));
    }
    r.rows.push_back(rr);
  }
  return r;
}

// A request of prompt_len tokens (0, 1, 2, ... mod 500) for max_tokens tokens.
inline msg::submit fake_request(msg::request_id id, int prompt_len, int max_tokens,
                                bool ignore_eos = false) {
  msg::submit s;
  s.id = id;
  for (int i = 0; i < prompt_len; ++i) s.prompt.push_back(static_cast<msg::token_id>(i % 500));
  s.max_tokens = max_tokens;
  s.ignore_eos = ignore_eos;
  return s;
}

// What a core emitted, by request: every token in order, and the event that ended it.
struct core_events {
  std::map<msg::request_id, std::vector<msg::token_id>> tokens;
  std::map<msg::request_id, msg::token_event> last;

  void take(std::vector<actors::outgoing_event>& out) {
    for (auto& e : out) {
      auto& t = tokens[e.event.id];
      t.insert(t.end(), e.event.tokens.begin(), e.event.tokens.end());
      if (e.event.finish != msg::finish_reason::none) last[e.event.id] = e.event;
    }
    out.clear();
  }
};

// The engine's copies of the block tables and sampling parameters, brought up to date by each
// plan as the engine does it (actors/engine/block_tables, sequence_sampling). The plan carries
// only differences, so after each plan every row's copy must equal the scheduler's table, every
// sampling row must have its sequence's parameters (sent once), and the copies kept are only
// those of sequences the scheduler still has: a difference the scheduler forgot to send fails
// here.
struct engine_tables_check {
  actors::block_tables tables;
  actors::sequence_sampling params;
  std::map<msg::request_id, int> carried;  // rows that carried parameters, by sequence

  void on_plan(const msg::step_plan& p, const actors::scheduler_core& core) {
    tables.release(p.ended);
    tables.release(p.preempted);  // as the engine: the next row sends the whole table
    params.release(p.ended);
    for (const msg::plan_row& row : p.rows) {
      INFO("step " << p.step << ", sequence " << row.seq);
      const std::vector<std::int32_t>& copy = tables.apply(row);
      REQUIRE(copy == core.block_table(row.seq));
      if (row.carries_sampling) ++carried[row.seq];
      msg::plan_row filled = row;
      REQUIRE_NOTHROW(params.fill(filled));
    }
    const msg::scheduler_stats s = core.stats();
    REQUIRE(tables.num_sequences() <=
            static_cast<std::size_t>(s.num_running) + static_cast<std::size_t>(s.num_waiting));
  }
};

struct core_driver : core_events {
  actors::scheduler_core core;
  engine_tables_check engine_tables;

  core_driver(actors::scheduler_options o, msg::engine_ready r) : core(o, r) {}

  void submit(msg::submit s) {
    std::vector<actors::outgoing_event> out;
    core.submit(std::move(s), out);
    take(out);
  }
  msg::submit_ack submit_batch(std::vector<msg::submit> choices) {
    std::vector<actors::outgoing_event> out;
    auto ack = core.submit_batch(std::move(choices), out);
    take(out);
    core.check_invariants();
    return ack;
  }
  void cancel(msg::request_id id, msg::cancel_reason why) {
    std::vector<actors::outgoing_event> out;
    core.cancel(id, out, why);
    take(out);
    core.check_invariants();
  }
  // Runs steps of the fake model until the core is idle, or until `stop` (asked between steps,
  // with the number of steps run so far) says so; returns the steps run. A plan's copy batch is
  // answered done after its step.
  int run(const std::function<bool(int)>& stop = {}) {
    int steps = 0;
    std::vector<actors::outgoing_event> out;
    for (;;) {
      if (stop && stop(steps)) return steps;
      auto plan = core.plan(out);
      take(out);
      if (!plan) return steps;
      core.check_invariants();
      engine_tables.on_plan(*plan, core);
      core.on_result(fake_engine(*plan), out);
      take(out);
      core.check_invariants();
      // Its copies on the copy stream are done with the step (no bytes here to move).
      if (plan->copy_batch != 0) core.on_copies_done({plan->copy_batch, true, {}});
      core.check_invariants();
      ++steps;
    }
  }
};

}  // namespace courier::test
