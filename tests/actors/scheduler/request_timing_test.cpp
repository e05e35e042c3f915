// A request's latencies from its times (actors/scheduler/request_timing), as vLLM's request
// metrics define them.
#include "actors/scheduler/request_timing.hpp"

#include <catch2/catch.hpp>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_request_timing {

using courier::actors::request_timing;

TEST_CASE("request timing: one interval per step, however many tokens it gave", "[scheduler]") {
  request_timing t;
  t.arrival_ns = 1'000'000'000;
  t.scheduled_ns = 1'500'000'000;
  t.tokens_at(2'000'000'000);  // the first token: TTFT 1 s after arrival
  t.tokens_at(2'250'000'000);
  t.tokens_at(2'250'000'000);  // a second token of the same step (an accepted draft)
  t.tokens_at(3'000'000'000);
  courier::msg::request_summary q;
  t.summarize(q, 4'000'000'000);
  CHECK(q.e2e_s == Approx(3.0));
  CHECK(q.queue_s == Approx(0.5));
  CHECK(q.prefill_s == Approx(0.5));
  CHECK(q.ttft_s == Approx(1.0));
  CHECK(q.decode_s == Approx(2.0));
  REQUIRE(q.inter_token_s.size() == 2);
  CHECK(q.inter_token_s[0] == Approx(0.25));
  CHECK(q.inter_token_s[1] == Approx(0.75));
}

TEST_CASE("request timing: a request that ends before it is planned has only its e2e",
          "[scheduler]") {
  request_timing t;
  t.arrival_ns = 5'000'000'000;
  courier::msg::request_summary q;
  t.summarize(q, 5'200'000'000);  // cancelled while waiting
  CHECK(q.e2e_s == Approx(0.2));
  CHECK(q.queue_s == -1.0);  // never reached: left as a new summary has it
  CHECK(q.prefill_s == -1.0);
  CHECK(q.ttft_s == -1.0);
  CHECK(q.decode_s == -1.0);
  CHECK(q.inter_token_s.empty());
}

}  // namespace courier_test_actors_scheduler_request_timing
