#pragma once
// A model of a hybrid's device state rows for the scheduler core tests: each row's recurrent
// state is a hash of the tokens it took in; a plan's state copies (first, in order), restores
// and snapshots move rows as the engine does, and every row must find, before it runs, the
// state of exactly the tokens before its start position (a fresh state at position 0, a
// restored snapshot, or the state a copy back from the host put into its slot).
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "messages/step.hpp"
#include "tests/support/scheduler_core_driver.hpp"

namespace courier::test {

inline std::uint64_t fold(std::uint64_t h, msg::token_id t) {
  return (h ^ (t + 1)) * 0x100000001b3ULL;
}
constexpr std::uint64_t fresh_state = 0xcbf29ce484222325ULL;

struct state_device {
  std::map<std::int32_t, std::uint64_t> rows;  // state row -> hash of what it took in
  std::map<std::int32_t, std::uint64_t> host;  // the host tier's rows
  std::map<msg::request_id, std::vector<msg::token_id>> prompts;
  int restores = 0;
  int snapshots = 0;
  int copied_back = 0;  // first rows continuing from a state copied back (swapped in)
  starts_seen starts;

  msg::token_id token_at(msg::request_id seq, std::int32_t pos) const {
    const auto& p = prompts.at(seq);
    return pos < static_cast<std::int32_t>(p.size()) ? p[static_cast<std::size_t>(pos)]
                                                     : next_token(seq, pos);
  }
  std::uint64_t hash_of(msg::request_id seq, std::int32_t n) const {
    std::uint64_t h = fresh_state;
    for (std::int32_t i = 0; i < n; ++i) h = fold(h, token_at(seq, i));
    return h;
  }

  // Sequences in `doomed` (a step of theirs failed: they fail too) are not checked.
  void run(const msg::step_plan& p, const std::set<msg::request_id>* doomed = nullptr) {
    starts.on_plan(p);
    for (const msg::state_copy& c : p.state_copies) {  // first, in order
      if (c.to_host) {
        REQUIRE(rows.count(c.row));
        host[c.host_row] = rows[c.row];
      } else {
        REQUIRE(host.count(c.host_row));
        rows[c.row] = host[c.host_row];
      }
    }
    for (const msg::plan_row& row : p.rows) {
      if (doomed && doomed->count(row.seq)) continue;
      INFO("step " << p.step << ", sequence " << row.seq << " from " << row.start_pos);
      const std::int32_t slot = starts.of(row.seq).state_slot;
      const std::int32_t restore = starts.restore(row.seq);
      REQUIRE(slot >= 0);
      std::uint64_t& s = rows[slot];
      if (starts.copied(row.seq)) {
        REQUIRE(restore < 0);
        ++copied_back;
      }
      if (restore >= 0) {
        REQUIRE(rows.count(restore));
        s = rows[restore];
        ++restores;
      } else if (row.start_pos == 0) {
        s = fresh_state;
      }
      REQUIRE(s == hash_of(row.seq, row.start_pos));  // the state of exactly its prefix
      for (std::size_t i = 0; i < row.tokens.size(); ++i) {
        const auto pos = row.start_pos + static_cast<std::int32_t>(i);
        if (!row.follows) REQUIRE(row.tokens[i] == token_at(row.seq, pos));
        s = fold(s, token_at(row.seq, pos));
      }
      if (row.state_snapshot >= 0) {
        REQUIRE(row.state_snapshot != slot);
        rows[row.state_snapshot] = s;
        ++snapshots;
      }
    }
  }
};

}  // namespace courier::test
