// The scheduler and the engine together on the sim backend: continuous batching must not change
// any request's output, whatever the chunking, caching, preemption or cancellations around it.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "tests/support/reference_match.hpp"
#include "tests/support/runtime_harness.hpp"
#include "tests/support/submit_reference.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_scheduler {

using namespace courier;

namespace {

const char* const model_name = "tiny-llama3";

// A mix of greedy and seeded sampling requests with prompts of 1..max_prompt tokens and
// min_out..min_out+23 output tokens.
std::vector<msg::submit> mixed_requests(int n, unsigned seed, int max_prompt = 200,
                                        int min_out = 1) {
  std::mt19937 rng(seed);
  std::vector<msg::submit> out;
  for (int i = 0; i < n; ++i) {
    msg::submit s;
    s.id = static_cast<msg::request_id>(i + 1);
    const int len = 1 + static_cast<int>(rng() % static_cast<unsigned>(max_prompt));
    for (int t = 0; t < len; ++t) s.prompt.push_back(rng() % 2048);
    s.max_tokens = min_out + static_cast<int>(rng() % 24);
    s.ignore_eos = true;
    s.sampling.has_seed = true;
    s.sampling.seed = rng();
    if (i % 2 == 0) {
      s.sampling.temperature = 0.0f;
    } else {
      s.sampling.temperature = 0.8f;
      s.sampling.top_p = 0.9f;
      s.sampling.top_k = 50;
    }
    out.push_back(s);
  }
  return out;
}

struct expected_outputs {
  std::vector<msg::submit> requests;
  std::map<msg::request_id, test::reference_output> tokens;
};

expected_outputs alone_outputs(std::vector<msg::submit> requests) {
  expected_outputs x;
  x.requests = std::move(requests);
  test::sim_model sm(model_name);
  for (const auto& s : x.requests) x.tokens[s.id] = test::reference_for(sm, s);
  return x;
}

const expected_outputs& expected() {
  static const expected_outputs e = alone_outputs(mixed_requests(64, 42));
  return e;
}

void run_and_compare(config::server_config cfg, msg::scheduler_stats* stats_out = nullptr,
                     const expected_outputs& want = expected()) {
  test::harness h(cfg);
  for (const auto& s : want.requests) h.submit(s);
  auto& got = h.wait_all();
  for (const auto& s : want.requests) {
    INFO("request " << s.id << " with a " << s.prompt.size() << "-token prompt");
    const auto& o = got.at(s.id);
    CHECK(o.last.finish == msg::finish_reason::length);
    CHECK(test::mismatch(o.tokens, want.tokens.at(s.id)) == "");
    CHECK(o.last.use.prompt_tokens == static_cast<int>(s.prompt.size()));
    CHECK(o.last.use.completion_tokens == s.max_tokens);
  }
  const auto st = h.stats();
  CHECK(st.num_running == 0);
  CHECK(st.num_waiting == 0);
  CHECK(st.num_free_blocks + st.num_cached_blocks == st.num_total_blocks);
  const auto drained = h.drain();
  CHECK(drained.num_free_blocks == drained.num_total_blocks);
  if (stats_out) *stats_out = st;
}

}  // namespace

TEST_CASE("scheduler: 64 concurrent requests give exactly what each gives alone",
          "[integration][scheduler]") {
  run_and_compare(test::sim_config(model_name));
}

TEST_CASE("scheduler: with overlap, rows follow steps in flight; without, none do",
          "[integration][scheduler]") {
  auto cfg = test::sim_config(model_name);
  REQUIRE(cfg.scheduler.overlap);  // the default, which the other cases run with
  msg::scheduler_stats st;
  run_and_compare(cfg, &st);
  CHECK(st.follow_rows > 0);
  cfg.scheduler.overlap = false;
  run_and_compare(cfg, &st);
  CHECK(st.follow_rows == 0);
}

TEST_CASE("scheduler: the same with max_batched_tokens 7", "[integration][scheduler]") {
  auto cfg = test::sim_config(model_name);
  cfg.scheduler.max_batched_tokens = 7;
  run_and_compare(cfg);
}

TEST_CASE("scheduler: the same with prefix caching off", "[integration][scheduler]") {
  auto cfg = test::sim_config(model_name);
  cfg.scheduler.prefix_caching = false;
  run_and_compare(cfg);
}

TEST_CASE("scheduler: the same with a KV budget so small that preemption happens",
          "[integration][scheduler]") {
  auto cfg = test::sim_config(model_name);
  // Short prompts, long outputs: decode rows keep needing blocks that only preemption frees.
  const expected_outputs want = alone_outputs(mixed_requests(64, 43, 40, 60));
  cfg.scheduler.num_kv_blocks = 12;  // 192 tokens: what the longest request needs alone
  msg::scheduler_stats st;
  run_and_compare(cfg, &st, want);
  INFO("preemptions: " << st.num_preemptions);
  CHECK(st.num_preemptions >= 5);
}

// The KV host tier: preempted sequences swap their computed blocks out and back in instead of
// recomputing them, and still give exactly what they give alone (the KV copied back is the KV
// they computed, bit for bit on the sim). Without the copies back (or with them into the wrong
// blocks), their tokens after resuming differ. (A host tier too small for every victim, and a
// failed step carrying copies out: swap_core_test.cpp.)
TEST_CASE("scheduler: the same when preempted sequences swap their KV to the host tier",
          "[integration][scheduler]") {
  const expected_outputs want = alone_outputs(mixed_requests(32, 43, 40, 60));
  auto cfg = test::sim_config(model_name);  // overlap on (without it: swap_core_test.cpp)
  cfg.scheduler.num_kv_blocks = 12;
  cfg.cache.host_tier_mb = 16;
  cfg.cache.preemption = "swap";
  msg::scheduler_stats st;
  run_and_compare(cfg, &st, want);
  INFO("preemptions: " << st.num_preemptions << ", swaps " << st.swap_outs);
  CHECK(st.swap_outs >= 5);
  CHECK(st.recompute_preemptions == 0);
  CHECK(st.swapped_in_blocks == st.swapped_out_blocks);
  // auto: on the sim, copying a block out and back (~7 us at its 10 GB/s) is far cheaper than
  // recomputing its 16 tokens (~3 ms of tiny-llama3 at its 10 GFLOP/s), so victims swap. (The
  // recompute mode, and a tier too small for every victim: swap_core_test.cpp.) The choice
  // weighs the device's rates: this half runs on the sim's whatever the test backend.
  cfg.device.backend = "sim";
  cfg.cache.host_tier_mb = 1;
  cfg.cache.preemption = "auto";
  cfg.device.sim.copy_latency_ms = 5;  // swaps back in stay in flight across steps
  run_and_compare(cfg, &st, want);
  CHECK(st.swap_outs > 0);
}

// The prefix cache's host tier: on 24 device blocks, documents asked about in waves are evicted
// from the device between waves, copied to host memory, and copied back for the next question
// about them: every output still equals the request alone (the KV copied back is the KV that
// was computed, bit for bit on the sim), and more prompt tokens are reused than without the
// tier. Without the copies back (or from the wrong host blocks), outputs differ. The copies back
// run on the copy stream: with a simulated transfer time, steps run while they are in flight,
// and a request's rows must wait for its own (a row that read its blocks before the copies
// landed would find stale KV and differ).
TEST_CASE("scheduler: prompts reuse documents evicted to the host tier, outputs unchanged",
          "[integration][scheduler]") {
  std::mt19937 rng(17);
  std::vector<std::vector<msg::token_id>> docs(5);
  for (auto& d : docs) {
    for (int t = 0; t < 150 + static_cast<int>(rng() % 100); ++t) d.push_back(rng() % 2048);
  }
  std::vector<msg::submit> all;
  for (int i = 0; i < 30; ++i) {
    msg::submit s;
    s.id = static_cast<msg::request_id>(i + 1);
    s.prompt = docs[rng() % docs.size()];
    for (int t = 0; t < 3 + static_cast<int>(rng() % 8); ++t) s.prompt.push_back(rng() % 2048);
    s.max_tokens = 4 + static_cast<int>(rng() % 8);
    s.ignore_eos = true;
    s.sampling.has_seed = true;
    s.sampling.seed = rng();
    s.sampling.temperature = i % 2 ? 0.8f : 0.0f;
    all.push_back(s);
  }
  const expected_outputs want = alone_outputs(all);
  auto served = [&](std::int64_t host_mb, std::int64_t copy_latency_ms) {
    auto cfg = test::sim_config(model_name);
    cfg.scheduler.num_kv_blocks = 24;
    cfg.cache.host_tier_mb = host_mb;
    cfg.device.sim.copy_latency_ms = copy_latency_ms;
    test::harness h(cfg);
    for (std::size_t w = 0; w < all.size(); w += 3) {  // waves of 3
      for (std::size_t i = w; i < w + 3; ++i) h.submit(all[i]);
      auto& got = h.wait_all();
      for (std::size_t i = w; i < w + 3; ++i) {
        INFO("request " << all[i].id);
        CHECK(test::mismatch(got.at(all[i].id).tokens, want.tokens.at(all[i].id)) == "");
      }
    }
    const auto st = h.stats();
    CHECK(h.drain().num_free_blocks == st.num_total_blocks);
    return st;
  };
  const msg::scheduler_stats off = served(0, 0), on = served(16, 0), slow = served(16, 25);
  INFO("cached tokens without the tier " << off.cached_tokens << ", with " << on.cached_tokens
                                         << ", with 25 ms copies " << slow.cached_tokens);
  CHECK(off.host_cache_hit_tokens == 0);
  CHECK(on.host_cache_spilled_blocks > 0);
  CHECK(on.host_cache_hit_tokens > 0);
  CHECK(on.cached_tokens > off.cached_tokens);
  CHECK(on.copy_batches > 0);
  CHECK(slow.host_cache_hit_tokens > 0);
  CHECK(slow.copy_batch_failures == 0);
}

TEST_CASE("scheduler: greedy output matches the transformers reference",
          "[integration][scheduler][reference]") {
  for (const std::string name : {"tiny-llama3", "tiny-qwen2", "tiny-qwen3"}) {
    INFO(name);
    test::reference ref(name);
    test::harness h(test::sim_config(name));
    for (int g = 0; g < ref.num_greedy(); ++g) {
      msg::submit s;
      s.id = static_cast<msg::request_id>(g + 1);
      s.prompt = ref.ids("p" + std::to_string(ref.i32("g" + std::to_string(g) + ".prompt")[0]) +
                         ".ids");
      s.max_tokens = 32;
      s.ignore_eos = true;
      s.sampling.temperature = 0;
      h.submit(s);
    }
    auto& got = h.wait_all();
    for (int g = 0; g < ref.num_greedy(); ++g) {
      const auto want = ref.ids("g" + std::to_string(g) + ".f32.ids");
      const auto margins = ref.f32("g" + std::to_string(g) + ".f32.margins");
      const auto& toks = got.at(static_cast<msg::request_id>(g + 1)).tokens;
      REQUIRE(toks.size() == 32);
      // tests/data/FIXTURES.md: up to the first step whose f32 margin is below 1e-3 on f32
      // compute (the sim), below 0.25 on bf16 (the CUDA backend).
      const float near_tie = test::exact_backend() ? 1e-3f : test::bf16_margin;
      for (std::size_t i = 0; i < want.size() && margins[i] >= near_tie; ++i) {
        INFO("greedy run " << g << " step " << i);
        REQUIRE(toks[i] == want[i]);
      }
    }
  }
}

TEST_CASE("scheduler: requests sharing a long prefix report cached tokens and prefill less",
          "[integration][scheduler]") {
  std::mt19937 rng(5);
  std::vector<msg::token_id> prefix(160);
  for (auto& t : prefix) t = rng() % 2048;
  test::harness h(test::sim_config(model_name));
  auto make = [&](msg::request_id id) {
    msg::submit s;
    s.id = id;
    s.prompt = prefix;
    for (int i = 0; i < 9; ++i) s.prompt.push_back(rng() % 2048);
    s.max_tokens = 4;
    s.sampling.temperature = 0;
    return s;
  };
  h.submit(make(1));
  h.wait_all();
  const auto before = h.stats();
  std::uint64_t prompt_total = 0;
  for (msg::request_id id = 2; id <= 6; ++id) {
    auto s = make(id);
    prompt_total += s.prompt.size();
    h.submit(s);
  }
  auto& got = h.wait_all();
  for (msg::request_id id = 2; id <= 6; ++id) {
    CHECK(got.at(id).last.use.cached_tokens == 160);  // 10 whole blocks of 16
  }
  const auto after = h.stats();
  CHECK(after.cached_tokens - before.cached_tokens == 5 * 160);
  CHECK(after.prefilled_tokens - before.prefilled_tokens == prompt_total - 5 * 160);
}

TEST_CASE("scheduler: cancelling half of 50 in-flight requests leaves the rest exact",
          "[integration][scheduler]") {
  const expected_outputs& want = expected();
  test::harness h(test::sim_config(model_name));
  std::mt19937 rng(9);
  std::map<msg::request_id, int> cancel_after;  // cancel once this many events arrived
  for (int i = 0; i < 50; ++i) {
    const auto& s = want.requests[static_cast<std::size_t>(i)];
    h.submit(s);
    if (i % 2 == 1) cancel_after[s.id] = static_cast<int>(rng() % 6);
  }
  for (auto& [id, n] : cancel_after) {
    if (n == 0) h.cancel(id);
  }
  std::map<msg::request_id, int> seen;
  auto& got = h.wait_all([&](const msg::token_event& e) {
    auto it = cancel_after.find(e.id);
    if (it != cancel_after.end() && ++seen[e.id] == it->second) h.cancel(e.id);
  });
  int cancelled = 0;
  for (int i = 0; i < 50; ++i) {
    const auto& s = want.requests[static_cast<std::size_t>(i)];
    const auto& o = got.at(s.id);
    if (cancel_after.count(s.id)) {
      cancelled += o.last.finish == msg::finish_reason::cancelled;
      // Whatever it emitted before the cancel is a prefix of its full output.
      CHECK(test::mismatch(o.tokens, want.tokens.at(s.id), /*allow_prefix=*/true) == "");
    } else {
      CHECK(o.last.finish == msg::finish_reason::length);
      CHECK(test::mismatch(o.tokens, want.tokens.at(s.id)) == "");
    }
  }
  CHECK(cancelled >= 15);
  const auto st = h.stats();
  CHECK(st.num_free_blocks + st.num_cached_blocks == st.num_total_blocks);
  CHECK(h.drain().num_free_blocks == st.num_total_blocks);
}

TEST_CASE("scheduler: impossible requests end with one clear error event",
          "[integration][scheduler]") {
  auto cfg = test::sim_config(model_name);
  cfg.model.max_model_len = 64;
  test::harness h(cfg);
  msg::submit too_long;
  too_long.id = 1;
  too_long.prompt.assign(64, 5);
  msg::submit zero;
  zero.id = 2;
  zero.prompt = {1, 2, 3};
  zero.max_tokens = 0;
  msg::submit bad_id;
  bad_id.id = 3;
  bad_id.prompt = {1, 5000};
  h.submit(too_long);
  h.submit(zero);
  h.submit(bad_id);
  auto& got = h.wait_all();
  CHECK(got.at(1).last.error == msg::error_code::too_long);
  CHECK_THAT(got.at(1).last.message, Catch::Contains("max_model_len"));
  CHECK(got.at(2).last.error == msg::error_code::invalid_request);
  CHECK_THAT(got.at(2).last.message, Catch::Contains("max_tokens"));
  CHECK(got.at(3).last.error == msg::error_code::invalid_request);
  CHECK_THAT(got.at(3).last.message, Catch::Contains("5000"));
  for (msg::request_id id = 1; id <= 3; ++id) CHECK(got.at(id).num_events == 1);
}

TEST_CASE("scheduler: prompt logprobs are the model's, whatever the chunking", "[integration][scheduler]") {
  test::reference ref(model_name);
  const auto prompt = ref.ids("p4.ids");  // 40 tokens
  test::sim_model sm(model_name);
  const auto logits = test::prefill_all_logits(*sm.model, prompt);
  const std::size_t V = static_cast<std::size_t>(sm.model->config().vocab_size);
  // On bf16 compute (FIXTURES.md) a logprob is within test::logprob_tolerance of f32's, and the
  // best token the same wherever f32's gap to the second is bf16_margin or more.
  const double logprob_tolerance = test::exact_backend() ? 1e-4 : test::logprob_tolerance();
  const float near_tie = test::exact_backend() ? 0.0f : test::bf16_margin;
  for (int budget : {2048, 7}) {
    INFO("max_batched_tokens " << budget);
    auto cfg = test::sim_config(model_name);
    cfg.scheduler.max_batched_tokens = budget;
    test::harness h(cfg);
    msg::submit s;
    s.id = 1;
    s.prompt = prompt;
    s.max_tokens = 0;  // score the prompt only
    s.sampling.prompt_logprobs = 2;
    h.submit(s);
    auto& got = h.wait_all();
    const auto& o = got.at(1);
    CHECK(o.last.finish == msg::finish_reason::length);
    CHECK(o.tokens.empty());
    REQUIRE(o.last.prompt_logprobs.size() == prompt.size() - 1);
    for (std::size_t p = 0; p + 1 < prompt.size(); ++p) {
      // Independent: log_softmax of the model's logits at position p, taken at token p + 1.
      const float* row = logits.data() + p * V;
      double mx = row[0];
      for (std::size_t i = 0; i < V; ++i) mx = std::max(mx, static_cast<double>(row[i]));
      double sum = 0;
      for (std::size_t i = 0; i < V; ++i) sum += std::exp(row[i] - mx);
      const double want = row[prompt[p + 1]] - mx - std::log(sum);
      const auto& lp = o.last.prompt_logprobs[p];
      INFO("position " << p);
      CHECK(lp.token == prompt[p + 1]);
      CHECK(std::abs(lp.logprob - want) < logprob_tolerance);
      REQUIRE(lp.top_ids.size() == 2);
      if (test::top_gap(row, V) >= near_tie) CHECK(lp.top_ids[0] == test::argmax(row, V));
    }
  }
}

}  // namespace courier_test_integration_scheduler
