// The router actor against replicas played by the test: a replica that stops answering
// heartbeats (a partition) is down, its streaming request ends with an error naming it and its
// unstarted one goes to the other replica under a new wire id; what the cut-off replica says
// about the moved request when the link heals reaches no client, it is told to cancel both, and
// it is used again once it answers. Batches: the replica's ack and events come back under the
// client's ids.
#include "actors/cluster/router_actor.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_cluster_router_actor {

using namespace courier;
using namespace std::chrono_literals;

// What a played replica received; `mute`: it leaves heartbeats unanswered.
struct replica_log {
  std::mutex m;
  bool mute = false;
  std::vector<msg::submit> submits;  // singles and each batch's choices
  std::vector<msg::request_id> groups;  // each batch's group, as sent
  std::vector<msg::request_id> cancels;
  int watches = 0;
  std::vector<caf::typed_response_promise<msg::scheduler_stats>> unanswered;
};

caf::behavior played_replica(caf::event_based_actor* self, std::shared_ptr<replica_log> log) {
  return {
      [self, log](msg::stats_atom) -> caf::result<msg::scheduler_stats> {
        std::lock_guard<std::mutex> lock(log->m);
        if (!log->mute) {
          log->unanswered.clear();  // each holds its actor: kept, they would keep it alive
          return msg::scheduler_stats{};
        }
        auto rp = self->make_response_promise<msg::scheduler_stats>();
        log->unanswered.push_back(rp);
        return rp;
      },
      [log](msg::submit& s) {
        std::lock_guard<std::mutex> lock(log->m);
        log->submits.push_back(std::move(s));
      },
      [log](msg::submit_batch& b) {
        std::lock_guard<std::mutex> lock(log->m);
        log->groups.push_back(b.choices.front().group);
        for (msg::submit& s : b.choices) log->submits.push_back(std::move(s));
      },
      [log](msg::cancel c) {
        std::lock_guard<std::mutex> lock(log->m);
        log->cancels.push_back(c.id);
      },
      [log](msg::watch_cache&) {
        std::lock_guard<std::mutex> lock(log->m);
        ++log->watches;
      },
  };
}

// Waits (up to 10 s) until `pred` holds on `log`.
template <class Pred>
bool eventually(replica_log& log, Pred pred) {
  for (int i = 0; i < 1000; ++i) {
    {
      std::lock_guard<std::mutex> lock(log.m);
      if (pred(log)) return true;
    }
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

msg::submit request(msg::request_id id, const caf::actor& client) {
  msg::submit s;
  s.id = id;
  for (int i = 0; i < 64; ++i) s.prompt.push_back(100 + i);  // four blocks: cache-aware follows
  s.max_tokens = 8;
  s.reply_to = client;
  return s;
}

msg::token_event event(msg::request_id id, std::vector<cache::token_id> tokens,
                       msg::finish_reason finish) {
  msg::token_event e;
  e.id = id;
  e.tokens = std::move(tokens);
  e.finish = finish;
  return e;
}

TEST_CASE("router: a partitioned replica's requests move or fail, its late words are dropped, "
          "and it serves again once it answers",
          "[cluster][router]") {
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::courier_messages>();
  cfg.set("scheduler.max-threads", 2);
  caf::actor_system sys{cfg};
  auto logs = std::vector<std::shared_ptr<replica_log>>{std::make_shared<replica_log>(),
                                                        std::make_shared<replica_log>()};
  actors::router_setup setup;
  for (std::size_t r = 0; r < 2; ++r) {
    setup.addresses.push_back("10.0.0." + std::to_string(r + 1) + ":7000");
    setup.handles.push_back(caf::actor_cast<actors::scheduler_actor>(
        sys.spawn(played_replica, logs[r])));
  }
  setup.heartbeat_ms = 20;
  setup.ready.block_size = 16;
  auto router = caf::actor_cast<caf::actor>(actors::spawn_router(sys, setup));
  caf::scoped_actor client{sys};
  auto next_event = [&](msg::token_event& out, std::chrono::milliseconds wait = 5s) {
    bool got = false;
    client->receive([&](msg::token_event& ev) { out = std::move(ev), got = true; },
                    caf::after(wait) >> [] {});
    return got;
  };

  // Two requests with one prompt: cache-aware routing keeps them together on one replica.
  client->send(router, request(1001, client));
  client->send(router, request(1002, client));
  std::size_t cut = 2;
  for (std::size_t r = 0; r < 2 && cut == 2; ++r) {
    if (eventually(*logs[r], [](replica_log& l) { return l.submits.size() == 2; })) cut = r;
  }
  REQUIRE(cut < 2);
  replica_log& a = *logs[cut];
  replica_log& b = *logs[1 - cut];
  const msg::request_id w1 = a.submits[0].id, w2 = a.submits[1].id;
  CHECK(w1 != w2);

  // 1001 streams a token; then the replica stops answering.
  client->send(router, event(w1, {5}, msg::finish_reason::none));
  msg::token_event e;
  REQUIRE(next_event(e));
  CHECK(e.id == 1001);
  CHECK(e.tokens == std::vector<cache::token_id>{5});
  {
    std::lock_guard<std::mutex> lock(a.m);
    a.mute = true;
  }
  // 1001 had streamed: it ends with an error naming the replica. 1002 had not: it moves.
  REQUIRE(next_event(e));
  CHECK(e.id == 1001);
  CHECK(e.finish == msg::finish_reason::error);
  CHECK_THAT(e.message, Catch::Contains(setup.addresses[cut]));
  REQUIRE(eventually(b, [](replica_log& l) { return l.submits.size() == 1; }));
  const msg::request_id w3 = b.submits[0].id;
  CHECK(w3 != w2);
  CHECK(b.submits[0].prompt == a.submits[1].prompt);
  CHECK(eventually(a, [&](replica_log& l) {
    return l.cancels == std::vector<msg::request_id>{w1, w2} ||
           l.cancels == std::vector<msg::request_id>{w2, w1};
  }));

  // The link heals: the cut-off replica's words about 1002 (and 1001) reach no client...
  {
    std::lock_guard<std::mutex> lock(a.m);
    a.mute = false;
  }
  client->send(router, event(w2, {9, 9}, msg::finish_reason::length));
  client->send(router, event(w1, {8}, msg::finish_reason::length));
  // ...while the replica that took 1002 over is heard under the client's id.
  client->send(router, event(w3, {7}, msg::finish_reason::length));
  REQUIRE(next_event(e));
  CHECK(e.id == 1002);
  CHECK(e.tokens == std::vector<cache::token_id>{7});
  CHECK(e.finish == msg::finish_reason::length);
  CHECK_FALSE(next_event(e, 300ms));

  // Answering again, it is up: watched anew, and a cancel of a request there reaches it.
  REQUIRE(eventually(a, [](replica_log& l) { return l.watches == 2; }));
  client->send(router, request(1003, client));
  auto count = [](replica_log& l) {
    std::lock_guard<std::mutex> lock(l.m);
    return l.submits.size();
  };
  for (int i = 0; i < 1000 && count(a) + count(b) < 4; ++i) std::this_thread::sleep_for(10ms);
  REQUIRE(count(a) + count(b) == 4);
  replica_log& took = count(a) == 3 ? a : b;
  client->send(router, msg::cancel{1003});
  CHECK(eventually(took, [](replica_log& l) {
    return !l.cancels.empty() && l.cancels.back() == l.submits.back().id;
  }));

  // A batch: the replica's ack and events come back under the client's ids.
  msg::submit_batch batch;
  batch.choices = {request(2001, client), request(2002, client)};
  client->send(router, std::move(batch));
  msg::request_id group = 0;
  std::vector<msg::request_id> wires;
  for (std::size_t r = 0; r < 2 && wires.empty(); ++r) {
    eventually(*logs[r], [&](replica_log& l) {
      if (l.groups.empty()) return false;
      group = l.groups.back();
      for (auto it = l.submits.end() - 2; it != l.submits.end(); ++it) wires.push_back(it->id);
      return true;
    });
  }
  REQUIRE(wires.size() == 2);
  CHECK(group == wires[0]);
  client->send(router, msg::submit_ack{group, msg::error_code::none, ""});
  client->send(router, event(wires[1], {3}, msg::finish_reason::length));
  bool acked = false;
  client->receive([&](msg::submit_ack& ack) { acked = ack.group == 2001; },
                  caf::after(5s) >> [] {});
  CHECK(acked);
  REQUIRE(next_event(e));
  CHECK(e.id == 2002);
  caf::anon_send_exit(router, caf::exit_reason::user_shutdown);
}

}  // namespace courier_test_actors_cluster_router_actor
