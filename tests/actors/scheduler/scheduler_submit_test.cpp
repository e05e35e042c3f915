// The scheduler's way in and early ways out, without actors or a model: a request's choices
// are queued together or refused together, and a stop string ends a request as EOS does.
#include <catch2/catch.hpp>

#include "tests/support/scheduler_core_driver.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_scheduler_submit {

using namespace courier;
using actors::scheduler_options;

namespace {

using driver = test::core_driver;

// Requests run to max_tokens: the fake model never emits the EOS.
msg::submit request(msg::request_id id, int prompt_len, int max_tokens) {
  return test::fake_request(id, prompt_len, max_tokens, /*ignore_eos=*/true);
}

}  // namespace

TEST_CASE("scheduler submit: a batch that does not fit the waiting queue is refused whole",
          "[scheduler]") {
  scheduler_options o;
  o.max_waiting = 3;
  driver d(o, test::fake_engine_ready(200));
  REQUIRE(d.submit_batch({request(1, 5, 5)}).error == msg::error_code::none);  // 1 waiting
  // Two of these three would fit; none is queued, and each ends at once with overloaded.
  const auto ack = d.submit_batch({request(10, 5, 5), request(11, 5, 5), request(12, 5, 5)});
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
  const auto fits = d.submit_batch({request(20, 5, 5), request(21, 5, 5)});
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
  const auto ack = d.submit_batch({request(1, 5, 5), bad, request(3, 5, 5)});
  CHECK(ack.error == msg::error_code::invalid_request);
  CHECK_THAT(ack.message, Catch::Contains("empty"));
  for (msg::request_id id : {1, 2, 3}) CHECK(d.last[id].error == msg::error_code::invalid_request);
  CHECK(d.core.stats().num_waiting == 0);
  // More choices than may ever wait: never accepted, so not "overloaded" (no point retrying).
  std::vector<msg::submit> many;
  for (msg::request_id id = 10; id < 15; ++id) many.push_back(request(id, 5, 5));
  const auto big = d.submit_batch(many);
  CHECK(big.error == msg::error_code::invalid_request);
  CHECK_THAT(big.message, Catch::Contains("server.max_waiting"));
  CHECK(d.core.stats().num_waiting == 0);
  // Ids repeated within a batch refuse it too.
  CHECK(d.submit_batch({request(20, 5, 5), request(20, 5, 5)}).error ==
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
    REQUIRE(d.submit_batch({s}).error == msg::error_code::none);
    d.run([&](int) { return d.tokens[1].size() >= 25; });  // between steps: none in flight
    REQUIRE(d.tokens[1].size() == 25);
    d.cancel(1, why);
    REQUIRE(d.last.count(1) == 1);
    const auto st = d.core.stats();
    const cache::lookup_scope scope = actors::lookup_scope_of(test::fake_engine_ready(200), "",
                                                              "team-a");
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
    REQUIRE(d.submit_batch({again}).error == msg::error_code::none);
    d.run();
    CHECK(d.last[2].use.cached_tokens == 16 * static_cast<int>(st.num_cached_blocks));
    d.core.evict_all_cached();
    CHECK(d.core.stats().num_free_blocks == 200);
  }
}

TEST_CASE("scheduler submit: a sequence the engine fails is not stored in the shared lookup "
          "cache; one that finishes is",
          "[scheduler][speculative]") {
  scheduler_options o;
  o.lookup.enabled = true;
  o.lookup.shared.capacity_bytes = 1 << 20;
  driver d(o, test::fake_engine_ready(200));
  const cache::lookup_scope scope =
      actors::lookup_scope_of(test::fake_engine_ready(200), "", "team-a");
  auto s = request(1, 40, 100);
  s.tenant = "team-a";
  REQUIRE(d.submit_batch({s}).error == msg::error_code::none);
  d.run([&](int) { return d.tokens[1].size() >= 10; });
  std::vector<actors::outgoing_event> out;
  auto plan = d.core.plan(out);
  d.take(out);
  REQUIRE(plan);
  d.engine_tables.on_plan(*plan, d.core);
  msg::step_result failed;
  failed.step = plan->step;
  failed.error = msg::error_code::engine_failure;
  failed.message = "a device fault";
  d.core.on_result(std::move(failed), out);
  d.take(out);
  d.core.check_invariants();
  REQUIRE(d.last.count(1) == 1);
  CHECK(d.last[1].finish == msg::finish_reason::error);
  CHECK(d.core.lookup_cache().find(scope) == nullptr);
  // The same request run to its end is stored, whole: prompt and output.
  auto again = request(2, 40, 12);
  again.tenant = "team-a";
  REQUIRE(d.submit_batch({again}).error == msg::error_code::none);
  d.run();
  CHECK(d.last[2].finish == msg::finish_reason::length);
  const cache::token_store* stored = d.core.lookup_cache().find(scope);
  REQUIRE(stored != nullptr);
  CHECK(stored->num_tokens() == 40 + 12);
  CHECK(stored->num_sequences() == 1);
}

}  // namespace courier_test_actors_scheduler_scheduler_submit
