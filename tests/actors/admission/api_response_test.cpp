#include "actors/admission/api_response.hpp"

#include <catch2/catch.hpp>

#include <set>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_api_response {

using namespace courier::admission;

TEST_CASE("api response: ids are the prefix and 24 random hex digits, never repeated",
          "[admission]") {
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i) {
    const std::string id = response_id("chatcmpl-");
    REQUIRE(id.size() == 9 + 24);
    CHECK(id.rfind("chatcmpl-", 0) == 0);
    CHECK(id.find_first_not_of("0123456789abcdef", 9) == std::string::npos);
    seen.insert(id);
  }
  CHECK(seen.size() == 10000);
  // Not a counter: consecutive ids share no long common prefix after the fixed one.
  const std::string a = response_id("cmpl-"), b = response_id("cmpl-");
  CHECK(a.compare(5, 12, b, 5, 12) != 0);
}

}  // namespace courier_test_actors_admission_api_response
