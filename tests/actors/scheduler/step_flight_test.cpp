// A step in flight (actors/scheduler/step_flight): what its answer reports. A step's duration
// starts when it was sent, or, planned ahead, when the step before it was answered; drafts are
// counted besides each decode row's own token; a row's accepted drafts are known only when the
// step answered every row.
#include "actors/scheduler/step_flight.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <vector>

#include "cache/block_pool.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_scheduler_step_flight {

using namespace courier;
using actors::fed_row;
using actors::flight;

namespace {

fed_row prefill(msg::request_id seq, std::int32_t n) {
  fed_row r;
  r.seq = seq;
  r.num_tokens = n;
  return r;
}

fed_row decode(msg::request_id seq, std::int32_t drafts) {
  fed_row r;
  r.seq = seq;
  r.num_tokens = 1 + drafts;
  r.sample = r.decode = true;
  r.num_drafts = drafts;
  return r;
}

// A step of a 100-token prompt chunk, a plain decode row and one with 3 drafts.
flight mixed_step() {
  flight f;
  f.step = 7;
  f.sent_ns = 1'000;
  f.rows = {prefill(1, 100), decode(2, 0), decode(3, 3)};
  return f;
}

msg::step_result answered(std::vector<std::size_t> tokens_per_row) {
  msg::step_result r;
  r.step = 7;
  r.forward_ms = 2.5;
  for (const std::size_t n : tokens_per_row) {
    r.rows.emplace_back();
    r.rows.back().tokens.assign(n, 5);
  }
  return r;
}

}  // namespace

TEST_CASE("step flight: a step's mix is its prefill tokens and decode rows", "[scheduler]") {
  std::int32_t prefill_tokens = -1, decode_rows = -1;
  mixed_step().mix(prefill_tokens, decode_rows);
  CHECK(prefill_tokens == 100);
  CHECK(decode_rows == 2);
  flight{}.mix(prefill_tokens, decode_rows);
  CHECK(prefill_tokens == 0);
  CHECK(decode_rows == 0);
}

TEST_CASE("step flight: the summary counts rows, tokens and drafts over the step's own time",
          "[scheduler]") {
  const flight f = mixed_step();
  // Sent at 1 us, answered at 4 us: 3 us; planned ahead behind a step answered at 2 us: 2 us.
  msg::step_summary st = actors::step_summary_of(f, answered({0, 1, 4}), f.sent_ns, 4'000);
  CHECK(st.step == 7);
  CHECK(st.duration_s == Approx(3e-6));
  CHECK(st.forward_s == Approx(2.5e-3));
  CHECK(st.num_rows == 3);
  CHECK(st.num_prefill_tokens == 100);
  CHECK(st.num_decode_rows == 2);
  CHECK(st.num_draft_tokens == 3);
  st = actors::step_summary_of(f, answered({0, 1, 4}), 2'000, 4'000);
  CHECK(st.duration_s == Approx(2e-6));
}

TEST_CASE("step flight: a row's accepted drafts are known only from a whole answer",
          "[scheduler]") {
  const flight f = mixed_step();
  const msg::step_result ok = answered({0, 1, 3});  // two of three drafts stood, then one sampled
  auto w = actors::observed_row(f, ok, 2);
  CHECK(w.seq == 3);
  CHECK(w.decode);
  CHECK(w.drafts == 3);
  CHECK(w.accepted == 2);
  CHECK(w.prefill_tokens == 0);
  w = actors::observed_row(f, ok, 0);  // a prefill chunk: its tokens, no drafts
  CHECK(w.prefill_tokens == 100);
  CHECK_FALSE(w.decode);
  CHECK(w.accepted == -1);
  CHECK(actors::observed_row(f, ok, 1).accepted == -1);  // a decode row without drafts
  msg::step_result failed = ok;
  failed.error = msg::error_code::engine_failure;
  CHECK(actors::observed_row(f, failed, 2).accepted == -1);
  CHECK(actors::observed_row(f, answered({0, 1}), 2).accepted == -1);  // rows missing
}

TEST_CASE("step flight: copy batches are numbered from 1 and hold their blocks until answered",
          "[scheduler]") {
  cache::block_pool host(4);
  actors::copy_batches batches;
  CHECK(batches.next() == 1);  // 0 is "no batch" (sequence::copy_batch)
  actors::copy_batch b;
  b.holds.host = *cache::block_refs::allocate(host, 2);
  b.seqs = {{7, 0}, {8, 2}};
  CHECK(batches.open(std::move(b)) == 1);
  CHECK(batches.next() == 2);
  CHECK(batches.size() == 1);
  CHECK(host.num_free() == 2);
  CHECK(batches.waits(1, 8, 2));
  CHECK_FALSE(batches.waits(1, 8, 3));  // preempted since: another epoch
  CHECK_FALSE(batches.waits(2, 7, 0));
  std::vector<std::int32_t> held;
  batches.host_blocks(held);
  CHECK(held.size() == 2);
  CHECK_FALSE(batches.close(5).has_value());  // not in flight
  {
    std::optional<actors::copy_batch> done = batches.close(1);
    REQUIRE(done.has_value());
    CHECK(done->seqs.size() == 2);
    CHECK(host.num_free() == 2);  // held by the answer until it goes
  }
  CHECK(host.num_free() == 4);
  CHECK(batches.size() == 0);
  CHECK_FALSE(batches.close(1).has_value());  // answered once
}

}  // namespace courier_test_actors_scheduler_step_flight
