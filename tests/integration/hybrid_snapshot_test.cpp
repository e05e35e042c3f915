// A hybrid model's prefix cache (tiny-hybrid on the sim): sequences resume from snapshots of
// their Mamba-2 state at cached prefixes, and every output equals the request's run alone
// (generate_one: no cache, from position 0), bit for bit, for each kind of hit (exact: a
// repeated prompt; intermediate: a checkpoint inside a shared document; branch: where two
// prompts parted; tail: the next turn of a conversation; spilled: brought back from the host
// tier), under snapshot eviction, preemption and cancellation. cached_tokens counts exactly the
// prefix restored.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "tests/support/alone_outputs.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_hybrid_snapshot {

using namespace courier;

namespace {

const char* const model_name = "tiny-hybrid";

std::vector<msg::token_id> random_tokens(std::mt19937& rng, int n) {
  std::vector<msg::token_id> t;
  for (int i = 0; i < n; ++i) t.push_back(rng() % 2048);
  return t;
}

std::vector<msg::token_id> join(std::vector<msg::token_id> a, const std::vector<msg::token_id>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<msg::token_id> head(const std::vector<msg::token_id>& a, std::size_t n) {
  return {a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n)};
}

msg::submit request(msg::request_id id, std::vector<msg::token_id> prompt, int max_tokens,
                    bool greedy = true) {
  msg::submit s;
  s.id = id;
  s.prompt = std::move(prompt);
  s.max_tokens = max_tokens;
  s.ignore_eos = true;
  s.sampling.has_seed = true;
  s.sampling.seed = 1000 + id;
  s.sampling.temperature = greedy ? 0.0f : 0.8f;
  s.sampling.logprobs = 3;  // compared bit for bit with the run without the cache
  return s;
}

// Runs `waves` of requests one wave after the other (each wave's requests together, the next
// submitted once the wave ended), each checked against its run alone (tokens), and, unless
// `reference`, against the same waves without the prefix cache: the logprobs of every token
// and its top alternatives, bit for bit. Returns every request's cached_tokens and logprobs,
// and the stats.
struct wave_run {
  std::map<msg::request_id, std::int32_t> cached;
  std::map<msg::request_id, std::vector<msg::token_logprob>> logprobs;
  msg::scheduler_stats stats;
};

wave_run run_waves(const config::server_config& cfg,
                   const std::vector<std::vector<msg::submit>>& waves, bool reference = false) {
  std::vector<msg::submit> all;
  for (const auto& w : waves) all.insert(all.end(), w.begin(), w.end());
  const test::alone_outputs want = test::outputs_alone(model_name, all);
  wave_run uncached;
  if (!reference) {
    auto off = cfg;
    off.scheduler.prefix_caching = false;
    uncached = run_waves(off, waves, true);
  }
  wave_run out;
  test::harness h(cfg);
  for (const auto& w : waves) {
    for (const auto& s : w) h.submit(s);
    auto& got = h.wait_all();
    for (const auto& s : w) {
      INFO("request " << s.id << ": " << s.prompt.size() << "-token prompt");
      const auto& o = got.at(s.id);
      CHECK(o.last.finish == msg::finish_reason::length);
      CHECK(test::mismatch(o.tokens, want.tokens.at(s.id)) == "");
      out.cached[s.id] = o.last.use.cached_tokens;
      out.logprobs[s.id] = o.logprobs;
      if (reference) continue;
      const auto& ref = uncached.logprobs.at(s.id);
      REQUIRE(o.logprobs.size() == ref.size());
      for (std::size_t i = 0; i < ref.size(); ++i) {
        INFO("token " << i);
        if (test::exact_backend()) {
          CHECK(o.logprobs[i].logprob == ref[i].logprob);  // exactly: the same computation
          CHECK(o.logprobs[i].top_ids == ref[i].top_ids);
          CHECK(o.logprobs[i].top_logprobs == ref[i].top_logprobs);
          continue;
        }
        // On bf16 the runs sum in other orders (the chunks of the scan start elsewhere): the
        // same up to the bf16 bound, until they part at a near-tie.
        if (o.logprobs[i].token != ref[i].token) break;
        CHECK(std::abs(o.logprobs[i].logprob - ref[i].logprob) <= test::logprob_tolerance());
        REQUIRE(o.logprobs[i].top_logprobs.size() == ref[i].top_logprobs.size());
        for (std::size_t k = 0; k < ref[i].top_logprobs.size(); ++k) {
          CHECK(std::abs(o.logprobs[i].top_logprobs[k] - ref[i].top_logprobs[k]) <=
                test::logprob_tolerance());
        }
      }
    }
  }
  out.stats = h.stats();
  CHECK(h.drain().num_free_blocks == out.stats.num_total_blocks);
  return out;
}

config::server_config snapshot_config() {
  auto cfg = test::hybrid_config(model_name);
  cfg.scheduler.block_size = 16;
  cfg.cache.ssm_checkpoint_tokens = 32;
  cfg.cache.ssm_snapshots = 16;
  return cfg;
}

// Whether a snapshot evicted from the device is worth spilling to host memory weighs the
// device's rates (snapshot_policy::worth_spilling): at the sim's, recomputing tiny-hybrid's
// prefixes takes longer than copying their state back; at a GPU's (the emulated H100) it does
// not, and nothing spills. The cases about spilled snapshots run at the sim's.
config::server_config sim_rates(config::server_config cfg) {
  cfg.device.backend = "sim";
  return cfg;
}

}  // namespace

TEST_CASE("hybrid snapshots: a repeated prompt resumes at its last block boundary (exact hit)",
          "[integration][scheduler]") {
  std::mt19937 rng(11);
  const auto p = random_tokens(rng, 50);
  for (const bool overlap : {true, false}) {
    auto cfg = snapshot_config();
    cfg.scheduler.overlap = overlap;
    const wave_run r = run_waves(cfg, {{request(1, p, 12)},
                                       {request(2, p, 12), request(3, p, 9, false)}});
    CHECK(r.cached.at(1) == 0);
    CHECK(r.cached.at(2) == 48);  // (50 - 1) / 16 * 16: the last token is always computed
    CHECK(r.cached.at(3) == 48);
    CHECK(r.stats.snapshot_hits_exact == 2);
    CHECK(r.stats.cached_tokens == 96);
  }
}

TEST_CASE("hybrid snapshots: a shared document resumes at a checkpoint, then where prompts "
          "parted (intermediate and branch hits)",
          "[integration][scheduler]") {
  std::mt19937 rng(12);
  const auto doc = random_tokens(rng, 100);
  const auto a = join(doc, random_tokens(rng, 10));           // checkpoints 32, 64; exact 96
  const auto b = join(head(doc, 70), random_tokens(rng, 20));  // KV to 64, snapshot at 64
  const auto c = join(head(doc, 90), random_tokens(rng, 13));  // KV to 80: from 64, branch at 80
  const auto e = join(head(doc, 90), random_tokens(rng, 7));   // resumes at 80
  const wave_run r = run_waves(snapshot_config(), {{request(1, a, 6)},
                                                   {request(2, b, 6)},
                                                   {request(3, c, 6)},
                                                   {request(4, e, 6, false)}});
  CHECK(r.cached.at(2) == 64);
  CHECK(r.cached.at(3) == 64);
  CHECK(r.cached.at(4) == 80);
  CHECK(r.stats.snapshot_hits_intermediate == 2);
  CHECK(r.stats.snapshot_hits_branch == 1);
  CHECK(r.stats.snapshot_recomputed_tokens == 16);  // c: blocks 64..80 stored, not resumable
}

TEST_CASE("hybrid snapshots: the next turn of a conversation resumes inside the last answer "
          "(tail hit)",
          "[integration][scheduler]") {
  std::mt19937 rng(13);
  const auto t1 = random_tokens(rng, 30);
  // Turn 1's answer as the test backend gives it (on bf16 it may part from the sim's).
  std::vector<msg::token_id> o1;
  {
    test::harness h(snapshot_config());
    h.submit(request(1, t1, 40));
    o1 = h.wait_all().at(1).tokens;
  }
  REQUIRE(o1.size() == 40);
  // Turn 2: the conversation so far (30 + 40 tokens: 69 computed, the last sampled only) and a
  // new message. The answer's last block boundary is at 64.
  const auto t2 = join(join(t1, o1), random_tokens(rng, 12));
  for (const bool decode_snapshots : {true, false}) {
    auto cfg = snapshot_config();
    cfg.cache.ssm_decode_snapshots = decode_snapshots;
    const wave_run r = run_waves(cfg, {{request(1, t1, 40)}, {request(2, t2, 8)}});
    if (decode_snapshots) {
      CHECK(r.cached.at(2) == 64);
      CHECK(r.stats.snapshot_hits_tail == 1);
    } else {  // only the prompt's snapshots: turn 1's exact one at 16
      CHECK(r.cached.at(2) == 16);
      CHECK(r.stats.snapshot_hits_exact == 1);
    }
  }
}

TEST_CASE("hybrid snapshots: a snapshot pushed out to the host tier is brought back for a hit "
          "(spilled hit)",
          "[integration][scheduler]") {
  std::mt19937 rng(15);
  std::vector<std::vector<msg::token_id>> prompts;
  for (int i = 0; i < 4; ++i) prompts.push_back(random_tokens(rng, 40));
  auto cfg = sim_rates(snapshot_config());
  cfg.cache.ssm_snapshots = 2;
  cfg.cache.ssm_host_tier_mb = 1;  // tiny-hybrid's state is 0.04 MB: 25 host rows
  std::vector<std::vector<msg::submit>> waves;
  msg::request_id id = 1;
  for (int round = 0; round < 2; ++round) {  // each prompt, then each again
    for (const auto& p : prompts) waves.push_back({request(id++, p, 5, round == 0)});
  }
  const wave_run r = run_waves(cfg, waves);
  INFO("snapshots taken " << r.stats.snapshots_taken << ", kept " << r.stats.num_snapshots
                          << " of " << r.stats.snapshot_capacity << ", misses "
                          << r.stats.snapshot_misses);
  for (msg::request_id again = 5; again <= 8; ++again) CHECK(r.cached.at(again) == 32);
  CHECK(r.stats.snapshot_hits_spilled >= 2);  // two rows for four prompts: the rest came back
  CHECK(r.stats.snapshot_hits_exact == 4);

  cfg.cache.ssm_host_tier_mb = 0;  // without the tier the evicted ones are gone
  const wave_run off = run_waves(cfg, waves);
  CHECK(off.stats.snapshot_hits_spilled == 0);
  CHECK(off.stats.snapshot_hits_exact < 4);
}

// The KV host tier behind a hybrid: documents evicted from the device (their blocks, and their
// snapshots detached to host state rows by their prefix's chain hash) come back for the next
// question on them, the blocks copied into fresh ones and the state into the sequence's slot;
// every output equals its run alone and, logprobs included, its run without the cache.
TEST_CASE("hybrid snapshots: documents evicted from the device come back from the host tiers, "
          "blocks and state",
          "[integration][scheduler]") {
  std::mt19937 rng(16);
  std::vector<std::vector<msg::token_id>> docs;
  for (int i = 0; i < 4; ++i) docs.push_back(random_tokens(rng, 120));
  auto cfg = sim_rates(snapshot_config());
  cfg.cache.ssm_snapshots = 2;
  cfg.scheduler.num_kv_blocks = 24;  // 384 tokens for 4 documents of 120 and their questions
  cfg.cache.host_tier_mb = 16;
  cfg.cache.ssm_host_tier_mb = 1;
  std::vector<std::vector<msg::submit>> waves;
  msg::request_id id = 1;
  for (int round = 0; round < 2; ++round) {  // each document, then each again
    for (const auto& d : docs) {
      waves.push_back({request(id++, join(d, random_tokens(rng, 7)), 5, round == 0)});
    }
  }
  const wave_run r = run_waves(cfg, waves);
  INFO("host hit tokens " << r.stats.host_cache_hit_tokens << ", spilled snapshot hits "
                          << r.stats.snapshot_hits_spilled);
  CHECK(r.stats.host_cache_hit_tokens > 0);
  CHECK(r.stats.snapshot_hits_spilled > 0);
  std::int32_t again = 0;
  for (msg::request_id i = 5; i <= 8; ++i) again += r.cached.at(i);
  cfg.cache.host_tier_mb = 0;  // without the KV tier, evicted documents are computed again
  const wave_run off = run_waves(cfg, waves);
  std::int32_t again_off = 0;
  for (msg::request_id i = 5; i <= 8; ++i) again_off += off.cached.at(i);
  INFO("cached on the second round: " << again << " with the KV host tier, " << again_off
                                      << " without");
  CHECK(off.stats.host_cache_hit_tokens == 0);
  CHECK(again > again_off);
}

TEST_CASE("hybrid snapshots: with two snapshot rows, few KV blocks, preemption and "
          "cancellations, every output still equals its run alone and every block comes back",
          "[integration][scheduler]") {
  std::mt19937 rng(14);
  const auto doc = random_tokens(rng, 80);
  std::vector<msg::submit> wave1, wave2;
  for (int i = 0; i < 8; ++i) {
    const auto p = join(head(doc, 20 + 8 * static_cast<std::size_t>(i)), random_tokens(rng, 9));
    wave1.push_back(request(static_cast<msg::request_id>(1 + i), p, 30, i % 2 == 0));
    wave2.push_back(request(static_cast<msg::request_id>(11 + i), p, 20, i % 2 == 1));
  }
  auto cfg = snapshot_config();
  cfg.cache.ssm_snapshots = 2;
  cfg.scheduler.num_kv_blocks = 14;  // 224 tokens for 8 sequences of up to 124: preemption
  const wave_run r = run_waves(cfg, {wave1, wave2});
  INFO("preemptions " << r.stats.num_preemptions << ", snapshots kept " << r.stats.snapshots_taken);
  CHECK(r.stats.num_preemptions > 0);
  CHECK(r.stats.snapshots_taken > 2);  // rows were given up and used again
  CHECK(r.stats.snapshot_hits_exact + r.stats.snapshot_hits_intermediate +
            r.stats.snapshot_hits_branch + r.stats.snapshot_hits_tail > 0);

  // Cancellations at every stage (waiting, prefilling, decoding) leave nothing held.
  auto want = test::outputs_alone(model_name, wave1);
  test::harness h(cfg);
  for (const auto& s : wave1) h.submit(s);
  int events = 0;
  auto& got = h.wait_all([&](const msg::token_event&) {
    if (++events % 5 == 0) h.cancel(static_cast<msg::request_id>(1 + (events / 5) % 8));
  });
  for (const auto& s : wave1) {
    const auto& o = got.at(s.id);
    INFO("request " << s.id);
    if (o.last.finish == msg::finish_reason::length) {
      CHECK(test::mismatch(o.tokens, want.tokens.at(s.id)) == "");
    } else {
      CHECK(o.last.finish == msg::finish_reason::cancelled);
      CHECK(test::mismatch(o.tokens, want.tokens.at(s.id), true) == "");
    }
  }
  const msg::scheduler_stats st = h.stats();
  CHECK(h.drain().num_free_blocks == st.num_total_blocks);
}

}  // namespace courier_test_integration_hybrid_snapshot
