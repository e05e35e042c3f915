// vLLM's min_tokens from the submit to the sampler, through the scheduler and the engine: no end
// token (EOS unless ignore_eos, a stop token id) before the output has min_tokens tokens, even
// one a +100 bias forces; from there on they end it as before. Outputs equal the model alone
// with the same min_tokens, with overlap (following rows) and prompt-lookup drafts (a row's
// positions each ban by their own output index); and the scheduler's checks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "tests/support/fixtures.hpp"
#include "tests/support/reference_match.hpp"
#include "tests/support/runtime_harness.hpp"
#include "tests/support/submit_reference.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_min_tokens {

using namespace courier;

namespace {

const char* const model_name = "tiny-llama3";

msg::token_id eos_id() {
  static const msg::token_id eos = [] {
    test::sim_model sm(model_name);
    REQUIRE_FALSE(sm.model->config().eos_token_ids.empty());
    return sm.model->config().eos_token_ids.front();
  }();
  return eos;
}

msg::submit greedy(msg::request_id id, std::int32_t max_tokens) {
  msg::submit s;
  s.id = id;
  s.prompt = {5, 17, 300, 42, 9};
  s.max_tokens = max_tokens;
  s.sampling.temperature = 0;
  return s;
}

// Prompts that repeat a phrase (drafts for prompt lookup) or not; greedy and seeded sampling;
// each stops at two tokens its own greedy output has early (found by a first run), with a
// min_tokens past them.
std::vector<msg::submit> ending_requests(
    const std::map<msg::request_id, std::vector<msg::token_id>>& plain,
    const std::vector<msg::submit>& base) {
  std::vector<msg::submit> out;
  for (const msg::submit& b : base) {
    msg::submit s = b;
    const std::vector<msg::token_id>& t = plain.at(s.id);
    s.stop_token_ids = {t[1], t[3]};
    s.sampling.min_tokens = 6 + static_cast<std::int32_t>(s.id % 7);
    out.push_back(s);
  }
  return out;
}

std::vector<msg::submit> base_requests() {
  std::mt19937 rng(41);
  std::vector<msg::submit> out;
  for (int i = 0; i < 24; ++i) {
    msg::submit s;
    s.id = static_cast<msg::request_id>(i + 1);
    if (i % 2 == 0) {
      std::vector<msg::token_id> phrase;
      for (int t = 0; t < 10; ++t) phrase.push_back(rng() % 2048);
      for (int r = 0; r < 5; ++r) s.prompt.insert(s.prompt.end(), phrase.begin(), phrase.end());
    } else {
      for (int t = 0, len = 1 + static_cast<int>(rng() % 50); t < len; ++t) {
        s.prompt.push_back(rng() % 2048);
      }
    }
    s.max_tokens = 20 + static_cast<int>(rng() % 12);
    s.sampling.has_seed = true;
    s.sampling.seed = rng();
    s.sampling.temperature = i % 4 >= 2 ? 0.8f : 0.0f;
    out.push_back(s);
  }
  return out;
}

std::map<msg::request_id, test::request_outcome> run_all(const config::server_config& cfg,
                                                         const std::vector<msg::submit>& rs,
                                                         msg::scheduler_stats& st) {
  test::harness h(cfg);
  for (const auto& s : rs) h.submit(s);
  std::map<msg::request_id, test::request_outcome> got = h.wait_all();
  st = h.stats();
  CHECK(h.drain().num_free_blocks == st.num_total_blocks);
  return got;
}

}  // namespace

TEST_CASE("min_tokens: an end token a +100 bias forces comes only once the output is that long",
          "[integration][scheduler]") {
  test::harness h(test::sim_config(model_name));
  for (const std::int32_t min_tokens : {0, 1, 5, 12}) {
    msg::submit s = greedy(static_cast<msg::request_id>(min_tokens + 1), 12);
    s.sampling.min_tokens = min_tokens;
    s.sampling.logit_bias_tokens = {eos_id()};
    s.sampling.logit_bias_values = {100.0f};
    h.submit(s);
  }
  auto& got = h.wait_all();
  for (const std::int32_t min_tokens : {0, 1, 5}) {
    INFO("min_tokens " << min_tokens);
    const auto& o = got.at(static_cast<msg::request_id>(min_tokens + 1));
    CHECK(o.last.finish == msg::finish_reason::stop);
    REQUIRE(o.tokens.size() == static_cast<std::size_t>(min_tokens + 1));
    CHECK(o.tokens.back() == eos_id());
    CHECK(std::count(o.tokens.begin(), o.tokens.end(), eos_id()) == 1);
  }
  // max_tokens = min_tokens: the whole output without it, by length.
  const auto& all = got.at(13);
  CHECK(all.last.finish == msg::finish_reason::length);
  CHECK(all.tokens.size() == 12);
  CHECK(std::count(all.tokens.begin(), all.tokens.end(), eos_id()) == 0);
  // ignore_eos takes EOS out of the end tokens: the forced token is an ordinary one.
  msg::submit ignoring = greedy(20, 6);
  ignoring.ignore_eos = true;
  ignoring.sampling.min_tokens = 4;
  ignoring.sampling.logit_bias_tokens = {eos_id()};
  ignoring.sampling.logit_bias_values = {100.0f};
  h.submit(ignoring);
  CHECK(h.wait_all().at(20).tokens == std::vector<msg::token_id>(6, eos_id()));
}

TEST_CASE(
    "min_tokens: a stop token id ends the output only past min_tokens; before, the "
    "output is the one without the stop",
    "[integration][scheduler]") {
  test::harness h(test::sim_config(model_name));
  msg::submit plain = greedy(1, 16);
  plain.ignore_eos = true;
  h.submit(plain);
  const std::vector<msg::token_id> u = h.wait_all().at(1).tokens;
  REQUIRE(u.size() == 16);
  const msg::token_id stop = u[2];
  const auto first = static_cast<std::size_t>(std::find(u.begin(), u.end(), stop) - u.begin());
  msg::submit stopped = plain;
  stopped.id = 2;
  stopped.stop_token_ids = {stop};
  msg::submit held = stopped;
  held.id = 3;
  held.sampling.min_tokens = 10;
  h.submit(stopped);
  h.submit(held);
  auto& got = h.wait_all();
  const auto& s = got.at(2);
  CHECK(s.last.finish == msg::finish_reason::stop);
  CHECK(s.tokens == std::vector<msg::token_id>(u.begin(), u.begin() + first + 1));
  const auto& m = got.at(3);
  REQUIRE(m.tokens.size() >= 10);
  CHECK(std::find(m.tokens.begin(), m.tokens.begin() + 10, stop) == m.tokens.begin() + 10);
  // Up to the first place the stop token was the model's choice, nothing changed.
  CHECK(std::equal(u.begin(), u.begin() + first, m.tokens.begin()));
  CHECK(m.tokens[first] != stop);
  if (m.last.finish == msg::finish_reason::stop) {
    CHECK(m.tokens.back() == stop);
    CHECK(std::count(m.tokens.begin(), m.tokens.end(), stop) == 1);
  } else {
    CHECK(m.last.finish == msg::finish_reason::length);
    CHECK(m.tokens.size() == 16);
  }
}

TEST_CASE("min_tokens: outputs equal the model alone, with following rows and drafts",
          "[integration][speculative]") {
  const std::vector<msg::submit> base = base_requests();
  auto cfg = test::sim_config(model_name);
  REQUIRE(cfg.scheduler.overlap);
  msg::scheduler_stats st;
  std::map<msg::request_id, std::vector<msg::token_id>> plain;
  for (const auto& [id, o] : run_all(cfg, base, st)) plain[id] = o.tokens;
  const std::vector<msg::submit> rs = ending_requests(plain, base);
  const auto want = test::references_for(model_name, rs);
  cfg.speculative.prompt_lookup.enabled = true;
  cfg.speculative.prompt_lookup.num_draft = 5;
  const auto got = run_all(cfg, rs, st);
  for (const auto& s : rs) {
    INFO("request " << s.id << ", temperature " << s.sampling.temperature << ", min_tokens "
                    << s.sampling.min_tokens);
    const std::vector<msg::token_id>& t = got.at(s.id).tokens;
    CHECK(test::mismatch(t, want.at(s.id)) == "");
    const auto lead =
        std::min<std::size_t>(t.size(), static_cast<std::size_t>(s.sampling.min_tokens));
    for (const msg::token_id stop : s.stop_token_ids) {
      CHECK(std::find(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(lead), stop) ==
            t.begin() + static_cast<std::ptrdiff_t>(lead));
    }
    // (A greedy one would have ended at its second token without min_tokens.)
    CHECK(t.size() >= static_cast<std::size_t>(s.sampling.min_tokens));
  }
  CHECK(st.follow_rows > 0);
  CHECK(st.spec_drafts > 0);
}

TEST_CASE("min_tokens: the scheduler refuses it above max_tokens, or with too many end tokens",
          "[integration][scheduler]") {
  test::harness h(test::sim_config(model_name));
  msg::submit over = greedy(1, 4);
  over.sampling.min_tokens = 5;
  msg::submit negative = greedy(2, 4);
  negative.sampling.min_tokens = -1;
  msg::submit many = greedy(3, 4);
  many.sampling.min_tokens = 2;
  for (msg::token_id t = 0; t < 64; ++t) many.stop_token_ids.push_back(1000 + t);  // + EOS
  msg::submit at_limit = many;
  at_limit.id = 4;
  at_limit.ignore_eos = true;  // 64 end tokens
  for (const auto& s : {over, negative, many, at_limit}) h.submit(s);
  auto& got = h.wait_all();
  for (msg::request_id id : {1, 2}) {
    INFO("request " << id);
    CHECK(got.at(id).last.error == msg::error_code::invalid_request);
    CHECK_THAT(got.at(id).last.message,
               Catch::Contains("min_tokens must be in [0, max_tokens = 4]"));
  }
  CHECK(got.at(3).last.error == msg::error_code::invalid_request);
  CHECK_THAT(got.at(3).last.message, Catch::Contains("at most 64 tokens"));
  CHECK(got.at(4).last.finish == msg::finish_reason::length);
  CHECK(got.at(4).tokens.size() == 4);
}

}  // namespace courier_test_integration_min_tokens
