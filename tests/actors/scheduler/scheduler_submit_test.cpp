// The scheduler's way in and early ways out, without actors or a model: a request's choices
// are queued together or refused together, and a stop string ends a request as EOS does.
#include <catch2/catch.hpp>

#include <map>

#include "actors/scheduler/scheduler_core.hpp"
#include "tests/support/fake_engine_ready.hpp"

using namespace courier;
using actors::outgoing_event;
using actors::scheduler_core;
using actors::scheduler_options;

namespace {

// The fake model: the token after position p of sequence s (never the EOS, 999).
msg::token_id next_token(msg::request_id s, std::int32_t pos) {
  return static_cast<msg::token_id>((s * 31 + static_cast<std::uint64_t>(pos) * 7) % 900);
}

msg::step_result fake_engine(const msg::step_plan& p) {
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

msg::submit request(msg::request_id id, int prompt_len, int max_tokens) {
  msg::submit s;
  s.id = id;
  for (int i = 0; i < prompt_len; ++i) s.prompt.push_back(static_cast<msg::token_id>(i % 500));
  s.max_tokens = max_tokens;
  s.ignore_eos = true;
  return s;
}

struct driver {
  scheduler_core core;
  std::map<msg::request_id, std::vector<msg::token_id>> tokens;
  std::map<msg::request_id, msg::token_event> last;

  driver(scheduler_options o, msg::engine_ready r) : core(o, r) {}

  void take(std::vector<outgoing_event>& out) {
    for (auto& e : out) {
      auto& t = tokens[e.event.id];
      t.insert(t.end(), e.event.tokens.begin(), e.event.tokens.end());
      if (e.event.finish != msg::finish_reason::none) last[e.event.id] = e.event;
    }
    out.clear();
  }
  msg::submit_ack submit(std::vector<msg::submit> choices) {
    std::vector<outgoing_event> out;
    auto ack = core.submit_batch(std::move(choices), out);
    take(out);
    core.check_invariants();
    return ack;
  }
  void cancel(msg::request_id id, msg::cancel_reason why) {
    std::vector<outgoing_event> out;
    core.cancel(id, out, why);
    take(out);
    core.check_invariants();
  }
  // Runs steps until idle (or until `until` says stop, between steps).
  void run(const std::function<bool()>& until = {}) {
    std::vector<outgoing_event> out;
    for (;;) {
      if (until && until()) return;
      auto plan = core.plan(out);
      take(out);
      if (!plan) return;
      core.check_invariants();
      core.on_result(fake_engine(*plan), out);
      take(out);
      core.check_invariants();
    }
  }
};

}  // namespace

TEST_CASE("scheduler submit: a batch that does not fit the waiting queue is refused whole",
          "[scheduler]") {
  scheduler_options o;
  o.max_waiting = 3;
  driver d(o, test::fake_engine_ready(200));
  REQUIRE(d.submit({request(1, 5, 5)}).error == msg::error_code::none);  // 1 waiting
  // Two of these three would fit; none is queued, and each ends at once with overloaded.
  const auto ack = d.submit({request(10, 5, 5), request(11, 5, 5), request(12, 5, 5)});
  CHECK(ack.group == 10);
  CHECK(ack.error == msg::error_code::overloaded);
  CHECK_THAT(ack.message, Catch::Contains("overloaded"));
  for (msg::request_id id : {10, 11, 12}) {
    INFO("choice " << id);
    REQUIRE(d.last.count(id) == 1);
    CHECK(d.last[id].finish == msg::finish_reason::error);
    CHECK(d.last[id].error == msg::error_code::overloaded);
    CHECK(d.tokens[id].empty());
  }
  CHECK(d.core.stats().num_waiting == 1);
  CHECK(d.core.stats().num_failed == 3);
  // Two fit beside the one waiting: both are queued and run.
  const auto fits = d.submit({request(20, 5, 5), request(21, 5, 5)});
  CHECK(fits.error == msg::error_code::none);
  CHECK(d.last.count(20) == 0);
  d.run();
  for (msg::request_id id : {1, 20, 21}) CHECK(d.tokens[id].size() == 5);
}

TEST_CASE("scheduler submit: one invalid choice refuses the batch; too many choices is a 400",
          "[scheduler]") {
  scheduler_options o;
  o.max_waiting = 4;
  driver d(o, test::fake_engine_ready(200));
  auto bad = request(2, 5, 5);
  bad.prompt.clear();
  const auto ack = d.submit({request(1, 5, 5), bad, request(3, 5, 5)});
  CHECK(ack.error == msg::error_code::invalid_request);
  CHECK_THAT(ack.message, Catch::Contains("empty"));
  for (msg::request_id id : {1, 2, 3}) CHECK(d.last[id].error == msg::error_code::invalid_request);
  CHECK(d.core.stats().num_waiting == 0);
  // More choices than may ever wait: never accepted, so not "overloaded" (no point retrying).
  std::vector<msg::submit> many;
  for (msg::request_id id = 10; id < 15; ++id) many.push_back(request(id, 5, 5));
  const auto big = d.submit(many);
  CHECK(big.error == msg::error_code::invalid_request);
  CHECK_THAT(big.message, Catch::Contains("server.max_waiting"));
  CHECK(d.core.stats().num_waiting == 0);
  // Ids repeated within a batch refuse it too.
  CHECK(d.submit({request(20, 5, 5), request(20, 5, 5)}).error ==
        msg::error_code::invalid_request);
  CHECK(d.core.stats().num_waiting == 0);
}

TEST_CASE("scheduler submit: a stop-string finish caches the blocks and stores the tokens as EOS "
          "does; a client gone does neither",
          "[scheduler]") {
  for (const auto why : {msg::cancel_reason::stop_string, msg::cancel_reason::client_gone}) {
    INFO("reason " << msg::to_string(why));
    scheduler_options o;
    o.lookup.enabled = true;
    o.lookup.shared.capacity_bytes = 1 << 20;
    driver d(o, test::fake_engine_ready(200));
    auto s = request(1, 40, 100);
    s.tenant = "team-a";
    REQUIRE(d.submit({s}).error == msg::error_code::none);
    d.run([&] { return d.tokens[1].size() >= 25; });  // between steps: none in flight
    REQUIRE(d.tokens[1].size() == 25);
    d.cancel(1, why);
    REQUIRE(d.last.count(1) == 1);
    const auto st = d.core.stats();
    const cache::lookup_scope scope{"fake", "fake", "", "team-a"};
    const cache::token_store* stored = d.core.lookup_cache().find(scope);
    if (why == msg::cancel_reason::stop_string) {
      CHECK(d.last[1].finish == msg::finish_reason::stop);
      CHECK(st.num_finished == 1);
      CHECK(st.num_cancelled == 0);
      // 40 prompt + 24 fed output tokens computed (the 25th is sampled, not yet fed): 4 blocks.
      CHECK(st.num_cached_blocks == (40 + 24) / 16);
      REQUIRE(stored != nullptr);
      CHECK(stored->num_tokens() == 40 + 25);
    } else {
      CHECK(d.last[1].finish == msg::finish_reason::cancelled);
      CHECK(st.num_cancelled == 1);
      CHECK(st.num_cached_blocks == 40 / 16);  // the prompt's, from the end of its prefill
      CHECK(stored == nullptr);
    }
    CHECK(st.num_running == 0);
    CHECK(st.num_free_blocks + st.num_cached_blocks == 200);
    // A later request with the same prompt and output reuses what was cached.
    auto again = request(2, 40, 1);
    again.prompt.insert(again.prompt.end(), d.tokens[1].begin(), d.tokens[1].end());
    REQUIRE(d.submit({again}).error == msg::error_code::none);
    d.run();
    CHECK(d.last[2].use.cached_tokens == 16 * static_cast<int>(st.num_cached_blocks));
    d.core.evict_all_cached();
    CHECK(d.core.stats().num_free_blocks == 200);
  }
}
