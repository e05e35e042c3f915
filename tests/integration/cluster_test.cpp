// Replicas and a front end in one process, talking through CAF's middleman on loopback as
// separate machines would (cluster.listen, cluster.replicas): every request answered through
// the front end is what it gives alone; cache-aware routing sends prompts sharing a head to the
// replica that holds it; a replica that dies mid-run loses no request that had not started
// streaming, ends the others with an error naming it, and leaves none hanging.
#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <memory>

#include "tests/support/child_process.hpp"
#include "tests/support/reference_match.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/runtime_harness.hpp"
#include "tests/support/submit_reference.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_cluster {

using namespace courier;

namespace {

const char* const model_name = "tiny-llama3";

std::unique_ptr<actors::runtime> replica() {
  auto cfg = test::sim_config(model_name);
  cfg.device.sim.threads = 1;
  cfg.cluster.listen = "127.0.0.1:0";
  return std::make_unique<actors::runtime>(cfg);
}

config::server_config front_config(const std::vector<std::unique_ptr<actors::runtime>>& rs,
                                   const std::string& routing) {
  auto cfg = test::sim_config(model_name);
  for (const auto& r : rs) {
    cfg.cluster.replicas.push_back("127.0.0.1:" + std::to_string(r->cluster_port()));
  }
  cfg.cluster.routing = routing;
  cfg.cluster.heartbeat_ms = 100;
  return cfg;
}

msg::submit request(msg::request_id id, std::vector<msg::token_id> prompt, int max_tokens,
                    bool sampled) {
  msg::submit s;
  s.id = id;
  s.prompt = std::move(prompt);
  s.max_tokens = max_tokens;
  s.ignore_eos = true;
  s.sampling.has_seed = true;
  s.sampling.seed = 1000 + id;
  if (sampled) s.sampling.temperature = 0.9f;
  return s;
}

struct outcome {
  std::vector<msg::token_id> tokens;
  msg::token_event last;
};

// Submits `reqs` to `rt`'s scheduler (the router) and collects their events until each ended
// (REQUIRE: within 60 s: nothing hangs). on_first: called once, at the first event with tokens.
std::map<msg::request_id, outcome> run(actors::runtime& rt, std::vector<msg::submit> reqs,
                                       const std::function<void()>& on_first = {}) {
  caf::scoped_actor self{rt.system()};
  std::map<msg::request_id, outcome> out;
  for (msg::submit& s : reqs) {
    s.reply_to = caf::actor_cast<caf::actor>(self);
    out[s.id];
    self->send(rt.scheduler(), std::move(s));
  }
  std::size_t pending = out.size();
  bool first = true, timed_out = false;
  self->receive_while([&] { return pending > 0 && !timed_out; })(
      [&](msg::token_event& e) {
        outcome& o = out.at(e.id);
        o.tokens.insert(o.tokens.end(), e.tokens.begin(), e.tokens.end());
        if (first && !e.tokens.empty() && on_first) {
          first = false;
          on_first();
        }
        if (e.finish != msg::finish_reason::none) {
          o.last = std::move(e);
          --pending;
        }
      },
      caf::after(std::chrono::seconds(60)) >> [&] { timed_out = true; });
  if (timed_out) {
    for (const auto& [id, o] : out) {
      if (o.last.finish == msg::finish_reason::none) {
        UNSCOPED_INFO("request " << id << " never ended (" << o.tokens.size() << " tokens)");
      }
    }
  }
  REQUIRE_FALSE(timed_out);
  return out;
}

std::vector<msg::token_id> head_then(int head, int tail_seed, int tail_len) {
  std::vector<msg::token_id> p;
  for (int t = 0; t < 64; ++t) p.push_back(static_cast<msg::token_id>(head + t));
  for (int t = 0; t < tail_len; ++t) p.push_back(static_cast<msg::token_id>(1500 + tail_seed * 7 + t));
  return p;
}

}  // namespace

TEST_CASE("cluster: requests through a front end give what they give alone; cache-aware routing "
          "keeps a shared head on one replica",
          "[integration][cluster]") {
  std::vector<std::unique_ptr<actors::runtime>> rs;
  rs.push_back(replica());
  rs.push_back(replica());
  actors::runtime front(front_config(rs, "cache_aware"));
  CHECK(front.ready().model_name == rs[0]->ready().model_name);
  test::sim_model one(model_name);
  std::vector<msg::submit> reqs;
  for (int i = 0; i < 12; ++i) {
    reqs.push_back(request(static_cast<msg::request_id>(i + 1), head_then(100 * (i % 3), i, 5 + i),
                           6 + i % 5, i % 2 == 1));
  }
  const auto got = run(front, reqs);
  for (const msg::submit& s : reqs) {
    INFO("request " << s.id);
    CHECK(got.at(s.id).last.finish == msg::finish_reason::length);
    CHECK(test::mismatch(got.at(s.id).tokens, test::reference_for(one, s)) == "");
  }
  // Now each head is cached somewhere: eight more prompts with those heads, one at a time (the
  // loads stay balanced), each finds its head's 4 blocks on the replica it is sent to.
  for (int i = 0; i < 8; ++i) {
    const auto id = static_cast<msg::request_id>(100 + i);
    const auto o = run(front, {request(id, head_then(100 * (i % 3), 50 + i, 9), 4, false)});
    INFO("request " << id);
    CHECK(o.at(id).last.use.cached_tokens >= 64);
  }
  msg::scheduler_stats st;
  caf::scoped_actor self{front.system()};
  std::string why;
  self->request(front.scheduler(), std::chrono::seconds(10), msg::stats_atom_v)
      .receive([&](msg::scheduler_stats& s) { st = s; },
               [&](caf::error& e) { why = caf::to_string(e); });
  INFO("stats: " << why);
  CHECK(st.num_running == 0);
  CHECK(st.num_total_blocks == 2 * rs[0]->ready().num_kv_blocks);
}

TEST_CASE("cluster: a replica process killed mid-run: unstarted requests move to the other, "
          "streaming ones end with an error naming it, none hangs; new requests avoid it",
          "[integration][cluster]") {
  // Two `courier serve` processes as replicas; this process is the front end.
  std::vector<std::unique_ptr<test::child_process>> procs;
  std::vector<std::string> addresses;
  for (int i = 0; i < 2; ++i) {
    procs.push_back(std::make_unique<test::child_process>(std::vector<std::string>{
        test::courier_binary(), "serve", "--model", test::model_dir(model_name), "--backend",
        "sim", "--set", "server.port=0", "--set", "cluster.listen=127.0.0.1:0", "--set",
        "device.sim.threads=1", "--set", "device.sim.memory_mb=512", "--set",
        "scheduler.num_kv_blocks=512"}));
    const std::string at = procs.back()->wait_for("scheduler published on ", 60);
    INFO(procs.back()->stderr_text());
    REQUIRE_FALSE(at.empty());
    addresses.push_back(at);
  }
  auto cfg = test::sim_config(model_name);
  cfg.cluster.replicas = addresses;
  cfg.cluster.routing = "round_robin";
  cfg.cluster.heartbeat_ms = 100;
  actors::runtime front(cfg);
  test::sim_model one(model_name);
  std::vector<msg::submit> reqs;
  for (int i = 0; i < 16; ++i) {
    reqs.push_back(request(static_cast<msg::request_id>(i + 1), head_then(10 * i, i, 20), 40,
                           i % 2 == 0));
  }
  const auto got = run(front, reqs, [&] { procs[1]->kill(); });
  int finished = 0, failed = 0;
  for (const msg::submit& s : reqs) {
    INFO("request " << s.id);
    const outcome& o = got.at(s.id);
    if (o.last.finish == msg::finish_reason::length) {
      CHECK(test::mismatch(o.tokens, test::reference_for(one, s)) == "");
      ++finished;
    } else {
      CHECK(o.last.finish == msg::finish_reason::error);
      CHECK_THAT(o.last.message, Catch::Contains(addresses[1]));
      CHECK_FALSE(o.tokens.empty());  // only a request that had streamed fails
      ++failed;
    }
  }
  CHECK(finished >= 8);  // replica 0's, and replica 1's that had not streamed
  CHECK(finished + failed == 16);
  // After: every new request is served by the replica left.
  std::vector<msg::submit> after;
  for (int i = 0; i < 4; ++i) after.push_back(request(200 + i, head_then(7, i, 3), 4, false));
  const auto later = run(front, after);
  for (const msg::submit& s : after) {
    CHECK(later.at(s.id).last.finish == msg::finish_reason::length);
  }
}

}  // namespace courier_test_integration_cluster
