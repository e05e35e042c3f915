// The admission server's text pools are job lanes (tests/base/job_lane_test.cpp); their size.
#include <catch2/catch.hpp>

#include <algorithm>
#include <thread>

#include "actors/admission/text_pool.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_text_pool {

using courier::admission::text_pool_threads;

TEST_CASE("text pool: server.admission_threads 0 is a quarter of the hardware threads",
          "[admission]") {
  CHECK(text_pool_threads(3) == 3);
  const int hw = static_cast<int>(std::thread::hardware_concurrency());
  CHECK(text_pool_threads(0) == std::max(1, hw / 4));
}

}  // namespace courier_test_actors_admission_text_pool
