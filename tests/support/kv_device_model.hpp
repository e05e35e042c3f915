#pragma once
// A model of the device's KV blocks and the host tier's, for the scheduler core's tests: each KV
// slot holds a hash of the tokens up to its position, a plan's block copies (swaps, spills,
// promotions) move blocks as the engine does (first, in order), and every row must find in its
// table exactly the KV of the tokens before it. Blocks of 16 tokens (fake_engine_ready).
#include <catch2/catch.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "tests/support/scheduler_core_driver.hpp"

namespace courier::test {

struct kv_device {
  static constexpr std::int32_t bs = 16;
  std::map<std::int32_t, std::vector<std::uint64_t>> blocks, host;
  std::map<msg::request_id, std::vector<msg::token_id>> prompts;
  test::engine_tables_check tables;
  int copies_out = 0, copies_in = 0;
  // Sequences with a row in a failed step (they fail: rows planned after it read garbage).
  std::set<msg::request_id> doomed;

  msg::token_id token_at(msg::request_id seq, std::int32_t pos) const {
    const auto& p = prompts.at(seq);
    return pos < static_cast<std::int32_t>(p.size()) ? p[static_cast<std::size_t>(pos)]
                                                     : test::next_token(seq, pos);
  }
  // The KV at `pos`: a hash of the tokens up to it (equal prefixes, equal KV); each sequence's
  // hashes are kept as they are extended.
  std::uint64_t kv_at(msg::request_id seq, std::int32_t pos) {
    std::vector<std::uint64_t>& h = kv_memo[seq];
    while (static_cast<std::int32_t>(h.size()) <= pos) {
      const std::uint64_t prev = h.empty() ? 0xcbf29ce484222325ULL : h.back();
      h.push_back((prev ^ (token_at(seq, static_cast<std::int32_t>(h.size())) + 1)) *
                  0x100000001b3ULL);
    }
    return h[static_cast<std::size_t>(pos)];
  }
  std::map<msg::request_id, std::vector<std::uint64_t>> kv_memo;

  void run(const msg::step_plan& p, const actors::scheduler_core& core) {
    for (const msg::block_copy& c : p.block_copies) {
      if (c.to_host) {
        host[c.host_block] = blocks[c.block];
        ++copies_out;
      } else {
        REQUIRE(host.count(c.host_block));
        blocks[c.block] = host[c.host_block];
        ++copies_in;
      }
    }
    tables.on_plan(p, core);
    for (const msg::plan_row& row : p.rows) {
      INFO("step " << p.step << ", sequence " << row.seq << " from " << row.start_pos);
      const std::vector<std::int32_t>& table = tables.tables.apply(row);
      for (std::int32_t pos = 0; pos < row.start_pos && !doomed.count(row.seq); ++pos) {
        const auto& b = blocks[table[static_cast<std::size_t>(pos / bs)]];
        const bool right = b.size() == static_cast<std::size_t>(bs) &&
                           b[static_cast<std::size_t>(pos % bs)] == kv_at(row.seq, pos);
        if (!right) FAIL("position " << pos << " of its table holds another prefix's KV");
      }
      for (std::size_t i = 0; i < row.tokens.size(); ++i) {
        const auto pos = row.start_pos + static_cast<std::int32_t>(i);
        auto& b = blocks[table[static_cast<std::size_t>(pos / bs)]];
        b.resize(static_cast<std::size_t>(bs), 0);
        b[static_cast<std::size_t>(pos % bs)] = kv_at(row.seq, pos);
      }
    }
  }
};

// Plans and answers steps until the core is idle, running each plan on `dev` and checking the
// core's invariants after every plan and result. The first plan with a copy to host memory is
// answered with an engine failure instead when `fail_copies_out` (nothing of it runs; the rows
// its sequences have in later plans read garbage and are not checked: they fail). after_result
// runs after each result (a client submitting more). Returns whether a step failed.
inline bool run_steps(actors::scheduler_core& core, kv_device& dev, core_events& ev,
                      bool fail_copies_out, const std::function<void()>& after_result = {}) {
  std::vector<actors::outgoing_event> out;
  std::deque<msg::step_result> flights;
  bool failed = false;
  for (int steps = 0; steps < 20000; ++steps) {
    while (auto p = core.plan(out)) {
      ev.take(out);
      core.check_invariants();
      bool copies_out = false;
      for (const auto& c : p->block_copies) copies_out |= c.to_host;
      if (fail_copies_out && copies_out && !failed) {
        failed = true;
        dev.tables.on_plan(*p, core);
        for (const auto& row : p->rows) dev.doomed.insert(row.seq);
        msg::step_result r;
        r.step = p->step;
        r.error = msg::error_code::engine_failure;
        r.message = "injected";
        flights.push_back(r);
        continue;
      }
      dev.run(*p, core);
      flights.push_back(fake_engine(*p));
    }
    if (flights.empty()) break;
    core.on_result(std::move(flights.front()), out);
    flights.pop_front();
    ev.take(out);
    core.check_invariants();
    if (after_result) after_result();
  }
  return failed;
}

}  // namespace courier::test
