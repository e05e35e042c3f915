// Repetition, presence and frequency penalties through the scheduler and the engine on the sim
// backend. The engine keeps each penalised sequence's list on the device (sent once, each
// sampled token counted into it there); the reference is the model alone (generate_one), which
// counts the list on the host from the prompt and the output before every token. Outputs must
// be equal under overlap (penalised rows follow the step in flight), chunked prefill,
// preemption (the list is sent again after it) and decode graphs. A third of the requests also
// have a logit bias, which the engine keeps on the device per sequence slot (written again from
// its own copy of the parameters when preemption gave the slot back).
#include <catch2/catch.hpp>

#include <random>

#include "tests/support/alone_outputs.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_penalties {

using namespace courier;

namespace {

const char* const model_name = "tiny-llama3";

// Prompts that repeat tokens (so prompt entries matter) from a small alphabet that outputs
// meet; each request has one or more penalties, strong enough to change the output; greedy and
// seeded sampling alternate. Every fifth request is not penalised, so batches mix both.
std::vector<msg::submit> penalised_requests(int n, unsigned seed, int max_out) {
  std::mt19937 rng(seed);
  std::vector<msg::submit> out;
  for (int i = 0; i < n; ++i) {
    msg::submit s;
    s.id = static_cast<msg::request_id>(i + 1);
    const int len = 1 + static_cast<int>(rng() % 40);
    for (int t = 0; t < len; ++t) s.prompt.push_back(rng() % (t % 3 == 0 ? 2048 : 64));
    s.max_tokens = max_out / 2 + static_cast<int>(rng() % static_cast<unsigned>(max_out / 2));
    s.ignore_eos = true;
    s.sampling.has_seed = true;
    s.sampling.seed = rng();
    s.sampling.temperature = i % 2 == 0 ? 0.0f : 0.9f;
    switch (i % 5) {
      case 0: s.sampling.repetition_penalty = 1.8f; break;
      case 1: s.sampling.frequency_penalty = 1.5f; break;
      case 2: s.sampling.presence_penalty = 2.0f; break;
      case 3:
        s.sampling.repetition_penalty = 0.7f;  // < 1 favours repeats
        s.sampling.frequency_penalty = -0.5f;
        s.sampling.presence_penalty = 0.5f;
        break;
      default: break;
    }
    if (i % 3 == 0) {  // and a logit bias, kept on the device from the first sampling row
      for (msg::token_id t = 0; t < 10; ++t) {
        s.sampling.logit_bias_tokens.push_back(static_cast<msg::token_id>(3 + 7 * t + i));
        s.sampling.logit_bias_values.push_back(t % 2 ? 2.0f : -3.0f);
      }
    }
    out.push_back(s);
  }
  return out;
}

using expected_outputs = test::alone_outputs;

const expected_outputs& expected(int which) {
  static const expected_outputs short_out = [] {
    return test::outputs_alone(model_name, penalised_requests(40, 7, 24));
  }();
  static const expected_outputs long_out = [] {  // for preemption: outputs that need blocks
    return test::outputs_alone(model_name, penalised_requests(24, 8, 120));
  }();
  return which == 0 ? short_out : long_out;
}


}  // namespace

TEST_CASE("penalties: the references differ from unpenalised outputs", "[integration][scheduler]") {
  // Otherwise the cases below could not tell penalties applied from penalties ignored.
  const expected_outputs& x = expected(0);
  std::vector<msg::submit> plain = x.requests;
  int differ = 0;
  test::sim_model sm(model_name);
  for (msg::submit& s : plain) {
    if (!msg::penalised(s.sampling)) continue;
    s.sampling.repetition_penalty = 1.0f;
    s.sampling.presence_penalty = 0.0f;
    s.sampling.frequency_penalty = 0.0f;
    differ += test::reference_for(sm, s).tokens != x.tokens.at(s.id).tokens ? 1 : 0;
  }
  CHECK(differ >= 24);  // of 32 penalised
}

TEST_CASE("penalties: outputs equal the model alone, and penalised rows follow the step in flight",
          "[integration][scheduler]") {
  auto cfg = test::sim_config(model_name);
  REQUIRE(cfg.scheduler.overlap);
  const msg::scheduler_stats st = test::run_and_compare_alone(cfg, expected(0));
  CHECK(st.follow_rows > 0);
  cfg.scheduler.overlap = false;
  test::run_and_compare_alone(cfg, expected(0));
}

TEST_CASE("penalties: the same with chunked prefill and with prefix caching off",
          "[integration][scheduler]") {
  auto cfg = test::sim_config(model_name);
  cfg.scheduler.max_batched_tokens = 7;
  test::run_and_compare_alone(cfg, expected(0));
  cfg = test::sim_config(model_name);
  cfg.scheduler.prefix_caching = false;
  test::run_and_compare_alone(cfg, expected(0));
}

TEST_CASE("penalties: the same when preemption drops the engine's lists and sends them again",
          "[integration][scheduler]") {
  auto cfg = test::sim_config(model_name);
  cfg.scheduler.num_kv_blocks = 12;  // 192 tokens: what the longest request needs alone
  const msg::scheduler_stats st = test::run_and_compare_alone(cfg, expected(1));
  INFO("preemptions: " << st.num_preemptions);
  CHECK(st.num_preemptions >= 3);
}

}  // namespace courier_test_integration_penalties
