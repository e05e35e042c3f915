#pragma once
// The scheduler's policy without actors or a model, for its core tests: a fake model whose next
// token is a function of (sequence, position), so every output is known exactly, and a driver
// that steps a scheduler_core with it, collecting each request's tokens and final event and
// checking the core's invariants after every plan and every result.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "actors/engine/sequence_table.hpp"
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

// Each sequence's start (msg::sequence_start) as the engine has it: the last one a plan sent,
// and whether the plan seen last sent it (its state_restore and state_copied are for that
// plan's row only).
struct starts_seen {
  std::map<msg::request_id, msg::sequence_start> last;
  std::set<msg::request_id> in_plan;

  void on_plan(const msg::step_plan& p) {
    in_plan.clear();
    for (const msg::sequence_start& st : p.starts) {
      last[st.seq] = st;
      in_plan.insert(st.seq);
    }
  }
  const msg::sequence_start& of(msg::request_id seq) const { return last.at(seq); }
  std::int32_t restore(msg::request_id seq) const {
    return in_plan.count(seq) ? of(seq).state_restore : -1;
  }
  bool copied(msg::request_id seq) const { return in_plan.count(seq) && of(seq).state_copied; }
};

// The engine's records of the running sequences, brought up to date by each plan as the engine
// does it (actors/engine/sequence_table). The plan carries only differences, so after each plan
// every row's table must equal the scheduler's, every row must have its sequence's start and
// every sampling row its parameters (sent once), every row that follows must find the token of
// the plan before, and the records kept are only those of sequences the scheduler still has: a
// difference the scheduler forgot to send fails here.
struct engine_tables_check {
  actors::sequence_table seqs{4096};
  std::map<msg::request_id, int> carried;  // starts that carried parameters, by sequence

  void on_plan(const msg::step_plan& p, const actors::scheduler_core& core) {
    INFO("step " << p.step);
    const std::optional<std::string> error = seqs.apply(p);
    REQUIRE_FALSE(error);
    for (const msg::sequence_start& st : p.starts) {
      if (st.carries_sampling) ++carried[st.seq];
    }
    const std::vector<actors::row_use> uses = seqs.resolve(p);
    for (std::size_t i = 0; i < p.rows.size(); ++i) {
      const msg::plan_row& row = p.rows[i];
      INFO("sequence " << row.seq);
      REQUIRE(seqs.find(row.seq)->table == core.block_table(row.seq));
      REQUIRE(uses[i].runs);
    }
    seqs.launched(p, uses);
    const msg::scheduler_stats s = core.stats();
    REQUIRE(seqs.size() <=
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
