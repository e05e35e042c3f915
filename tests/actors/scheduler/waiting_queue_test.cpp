// The waiting queue's order (preempted first, then round-robin across groups in their arrival
// order), and through the scheduler's policy: a large request no longer starves a later small one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "actors/scheduler/scheduler_core.hpp"
#include "actors/scheduler/waiting_queue.hpp"
#include "tests/support/fake_engine_ready.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_waiting_queue {

using namespace courier;
using actors::outgoing_event;
using actors::scheduler_core;
using actors::scheduler_options;
using actors::waiting_queue;

namespace {

std::vector<msg::request_id> drain(waiting_queue& q) {
  std::vector<msg::request_id> order;
  while (!q.empty()) {
    order.push_back(q.front());
    q.pop_front();
    q.check_invariants();
  }
  return order;
}

}  // namespace

TEST_CASE("waiting queue: preempted first, then one sequence of each group in turn",
          "[scheduler]") {
  waiting_queue q;
  for (msg::request_id id : {1, 2, 3}) q.push(id, 1);  // a request of three choices
  q.push(4, 4);                                      // two later single requests
  q.push(5, 5);
  q.push(6, 1);  // a late choice of the first group joins its group, not the end
  q.push_front(9);
  q.push_front(8);  // the most recently preempted goes first
  q.check_invariants();
  CHECK(q.size() == 8);
  CHECK(drain(q) == std::vector<msg::request_id>{8, 9, 1, 4, 5, 2, 3, 6});
}

TEST_CASE("waiting queue: erase takes a sequence out anywhere; an emptied group loses its turn",
          "[scheduler]") {
  waiting_queue q;
  q.push(1, 1);
  q.push(2, 1);
  q.push(3, 3);
  q.push_front(7);
  CHECK(q.erase(7));
  CHECK(q.erase(3));  // group 3 is gone
  CHECK_FALSE(q.erase(3));
  q.check_invariants();
  q.push(4, 4);
  CHECK(drain(q) == std::vector<msg::request_id>{1, 4, 2});
}

TEST_CASE("waiting queue: taking the first to admit it passes its group's turn, any other not",
          "[scheduler]") {
  waiting_queue q;
  q.push(1, 1);
  q.push(2, 1);
  q.push(3, 3);
  q.push(4, 4);
  q.take(1);  // admitted first: group 3's turn now
  CHECK(q.first(3) == std::vector<msg::request_id>{3, 4, 2});
  q.take(4);  // admitted past 3 (3 waits for an adapter's slot): 3 keeps its turn
  q.check_invariants();
  CHECK(drain(q) == std::vector<msg::request_id>{3, 2});
}

TEST_CASE("waiting queue: random operations keep its invariants and lose nothing", "[scheduler]") {
  std::mt19937 rng(5);
  waiting_queue q;
  std::set<msg::request_id> in;
  msg::request_id next = 1;
  for (int i = 0; i < 3000; ++i) {
    const auto op = rng() % 10;
    if (op < 4) {
      q.push(next, 1 + rng() % 6);
      in.insert(next++);
    } else if (op < 5) {
      q.push_front(next);
      in.insert(next++);
    } else if (op < 8 && !q.empty()) {
      CHECK(in.erase(q.front()) == 1);
      q.pop_front();
    } else if (!in.empty()) {
      auto it = in.begin();
      std::advance(it, static_cast<long>(rng() % in.size()));
      CHECK(q.erase(*it));
      in.erase(it);
    }
    q.check_invariants();
    REQUIRE(q.size() == in.size());
  }
  auto left = q.ids();
  CHECK(std::set<msg::request_id>(left.begin(), left.end()) == in);
}

TEST_CASE("scheduler core: a later one-sequence request is admitted within a round, not after "
          "every sequence of a large request",
          "[scheduler]") {
  scheduler_options o;
  o.max_num_seqs = 2;
  scheduler_core core(o, test::fake_engine_ready(400));
  std::vector<outgoing_event> out;
  std::vector<msg::submit> big;
  for (msg::request_id id = 100; id < 120; ++id) {  // 20 choices of one request
    msg::submit s;
    s.id = id;
    s.prompt = {1, 2, 3, 4};
    s.max_tokens = 4;
    s.ignore_eos = true;
    big.push_back(s);
  }
  REQUIRE(core.submit_batch(big, out).error == msg::error_code::none);
  std::vector<msg::request_id> first_token_order;  // each sequence, when its first token came
  std::set<msg::request_id> ended;
  auto take = [&] {
    for (auto& e : out) {
      if (!e.event.tokens.empty() &&
          std::find(first_token_order.begin(), first_token_order.end(), e.event.id) ==
              first_token_order.end()) {
        first_token_order.push_back(e.event.id);
      }
      if (e.event.finish != msg::finish_reason::none) ended.insert(e.event.id);
    }
    out.clear();
  };
  int steps = 0;
  for (;;) {
    auto plan = core.plan(out);
    take();
    if (!plan) break;
    msg::step_result r;
    r.step = plan->step;
    for (const auto& row : plan->rows) {
      msg::row_result rr;
      rr.seq = row.seq;
      if (row.sample) rr.tokens.push_back(7);
      r.rows.push_back(rr);
    }
    core.on_result(r, out);
    take();
    core.check_invariants();
    if (++steps == 1) {  // the large request runs two choices; a small one arrives
      msg::submit small;
      small.id = 500;
      small.prompt = {9, 9};
      small.max_tokens = 2;
      small.ignore_eos = true;
      core.submit(small, out);
      take();
    }
  }
  REQUIRE(ended.size() == 21);
  const auto at = std::find(first_token_order.begin(), first_token_order.end(), 500);
  REQUIRE(at != first_token_order.end());
  // Ahead of it: the two choices already running, and at most one more, whose turn it was.
  CHECK(at - first_token_order.begin() <= 3);
  core.evict_all_cached();
  CHECK(core.stats().num_free_blocks == 400);
}

}  // namespace courier_test_actors_scheduler_waiting_queue
