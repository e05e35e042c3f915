// The engine's copy of each sequence's sampling parameters: kept from the row that carries them,
// given to the sequence's later sampling rows (the logit bias kept apart), forgotten when it ends; a sampling row of a
// sequence whose parameters never came is a protocol error.
#include "actors/engine/sequence_sampling.hpp"

#include <catch2/catch.hpp>
#include <stdexcept>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_engine_sequence_sampling {

using namespace courier;

namespace {

msg::plan_row sampling_row(msg::request_id seq, bool carries, float temperature = 0.0f) {
  msg::plan_row r;
  r.seq = seq;
  r.tokens = {1};
  r.sample = true;
  r.carries_sampling = carries;
  r.sampling.temperature = temperature;
  return r;
}

}  // namespace

TEST_CASE("sequence sampling: parameters sent once are given to every later sampling row",
          "[engine]") {
  actors::sequence_sampling s;
  msg::plan_row first = sampling_row(1, true, 0.7f);
  first.sampling.logit_bias_tokens = {5, 9};
  first.sampling.logit_bias_values = {2.0f, -100.0f};
  first.sampling.top_k = 40;
  s.fill(first);
  CHECK(s.num_sequences() == 1);
  // The bias is kept apart, not copied into rows: the carrying row gave it up too.
  CHECK(first.sampling.logit_bias_tokens.empty());
  REQUIRE(s.bias(1) != nullptr);
  CHECK(s.bias(1)->tokens == std::vector<msg::token_id>{5, 9});
  CHECK(s.bias(1)->values == std::vector<float>{2.0f, -100.0f});

  msg::plan_row later = sampling_row(1, false);
  s.fill(later);
  CHECK(later.sampling.temperature == 0.7f);
  CHECK(later.sampling.top_k == 40);
  CHECK(later.sampling.logit_bias_tokens.empty());
  CHECK(s.bias(2) == nullptr);

  msg::plan_row chunk;  // a prefill chunk that samples nothing needs none
  chunk.seq = 2;
  chunk.tokens = {3, 4};
  s.fill(chunk);
  CHECK(s.num_sequences() == 1);

  msg::plan_row stranger = sampling_row(2, false, 0.3f);
  CHECK_THROWS_AS(s.fill(stranger), std::invalid_argument);
  CHECK(stranger.sampling.temperature == 0.3f);  // left as it was

  s.release({1, 42});
  CHECK(s.num_sequences() == 0);
  CHECK(s.bias(1) == nullptr);
  msg::plan_row after = sampling_row(1, false);
  CHECK_THROWS_AS(s.fill(after), std::invalid_argument);
}

}  // namespace courier_test_actors_engine_sequence_sampling
