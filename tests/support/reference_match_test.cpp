// The comparison the integration tests make with the sim reference: exact on sim, up to bf16
// numerics on another backend.
#include "tests/support/reference_match.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_support_reference_match {

using namespace courier;

namespace {

// Sets COURIER_TEST_BACKEND for one scope, then puts back what was there.
struct backend_env {
  std::string saved;
  bool had = false;
  explicit backend_env(const char* value) {
    if (const char* v = std::getenv("COURIER_TEST_BACKEND")) {
      had = true;
      saved = v;
    }
    ::setenv("COURIER_TEST_BACKEND", value, 1);
  }
  ~backend_env() {
    if (had) {
      ::setenv("COURIER_TEST_BACKEND", saved.c_str(), 1);
    } else {
      ::unsetenv("COURIER_TEST_BACKEND");
    }
  }
};

}  // namespace

TEST_CASE("reference match: exact on sim, up to a near-tie on a bf16 backend", "[support]") {
  test::reference_output greedy{{5, 6, 7, 8}, {2.0f, 0.1f, 3.0f, 3.0f}, true};
  test::reference_output sampled{{5, 6, 7, 8}, {}, false};
  const std::vector<model::token_id> diverge_at_near_tie{5, 9, 1, 1};
  const std::vector<model::token_id> diverge_at_clear_step{5, 6, 9, 8};
  {
    backend_env env("sim");
    CHECK(test::mismatch({5, 6, 7, 8}, greedy).empty());
    CHECK_FALSE(test::mismatch(diverge_at_near_tie, greedy).empty());
    CHECK_FALSE(test::mismatch(diverge_at_near_tie, sampled).empty());
    CHECK_FALSE(test::mismatch({5, 6, 7}, greedy).empty());
    CHECK(test::mismatch({5, 6, 7}, greedy, /*allow_prefix=*/true).empty());
    CHECK_FALSE(test::mismatch({5, 6, 7, 8, 9}, greedy, true).empty());
  }
  {
    backend_env env("cuda");
    CHECK(test::mismatch(diverge_at_near_tie, greedy).empty());  // margin 0.1 < 0.25
    CHECK(test::mismatch(diverge_at_clear_step, greedy).find("token 2") != std::string::npos);
    CHECK(test::mismatch(diverge_at_clear_step, sampled).empty());
    CHECK_FALSE(test::mismatch({5, 6, 7}, greedy).empty());  // lengths are still exact
    // Past an allowed divergence the texts differ, their lengths too (an EOS sooner or later).
    CHECK(test::mismatch({5, 9, 1}, greedy).empty());
    CHECK(test::mismatch({5, 6, 9, 8, 1}, sampled).empty());
    CHECK_FALSE(test::mismatch({5, 6, 7, 8, 1}, greedy).empty());  // no divergence: too long
  }
}

TEST_CASE("reference match: a greedy row's margin is between the tokens its mask and bias leave",
          "[support]") {
  gpu::sample_result s;  // raw logprobs, best first
  s.top_ids = {10, 11, 12, 13};
  s.top_logprobs = {-0.5f, -0.6f, -2.0f, -3.0f};
  CHECK(test::greedy_margin(s, nullptr, {}) == Approx(0.1f));
  std::vector<std::uint32_t> words(1, 0);
  words[0] = (1u << 10) | (1u << 12) | (1u << 13);  // 11 refused: 10 against 12
  CHECK(test::greedy_margin(s, &words, {}) == Approx(1.5f));
  CHECK(test::greedy_margin(s, nullptr, {{12, 2.0f}}) == Approx(0.5f));  // 12 at 0.0: over 10
  CHECK(test::greedy_margin(s, nullptr, {{10, -1.0f}}) == Approx(0.9f));  // 11 over 10 at -1.5
  // A token pushed up from outside the list: its place is unknown, so no margin.
  CHECK(test::greedy_margin(s, nullptr, {{40, 5.0f}}) == 0.0f);
  CHECK(test::greedy_margin(s, nullptr, {{40, -5.0f}}) == Approx(0.1f));
  words[0] = 1u << 10;  // one allowed token listed: at least its gap to the list's last
  CHECK(test::greedy_margin(s, &words, {}) == Approx(2.5f));
}

}  // namespace courier_test_support_reference_match
