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
  }
}

}  // namespace courier_test_support_reference_match
