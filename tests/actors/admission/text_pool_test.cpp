// The admission server's text pool: jobs run in the order posted, on the pool's own threads
// (each started through the hook), and the destructor runs what is queued before it returns.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "actors/admission/text_pool.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_text_pool {

using courier::admission::text_pool;
using courier::admission::text_pool_threads;

TEST_CASE("text pool: one thread runs jobs in order; the destructor drains the queue",
          "[admission]") {
  std::vector<int> order;
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  {
    text_pool pool(1);
    pool.post([gate] { gate.wait(); });  // holds the thread while the rest queue up
    for (int i = 0; i < 100; ++i) pool.post([&order, i] { order.push_back(i); });
    CHECK(pool.num_queued() >= 99);
    release.set_value();
  }  // every queued job ran before the destructor returned
  REQUIRE(order.size() == 100);
  for (int i = 0; i < 100; ++i) CHECK(order[static_cast<std::size_t>(i)] == i);
}

TEST_CASE("text pool: jobs run on the pool's threads, each started through the hook",
          "[admission]") {
  std::mutex mu;
  std::set<std::thread::id> started, ran;
  std::atomic<int> done{0};
  {
    text_pool pool(3, [&] {
      std::lock_guard<std::mutex> lock(mu);
      started.insert(std::this_thread::get_id());
    });
    CHECK(pool.num_threads() == 3);
    for (int i = 0; i < 300; ++i) {
      pool.post([&] {
        {
          std::lock_guard<std::mutex> lock(mu);
          ran.insert(std::this_thread::get_id());
        }
        ++done;
      });
    }
    // A job that throws leaves its thread running the rest.
    pool.post([] { throw std::runtime_error("a bug in a job"); });
    pool.post([&] { ++done; });
  }
  CHECK(done == 301);
  CHECK(started.size() == 3);
  CHECK(ran.count(std::this_thread::get_id()) == 0);
  for (const auto& id : ran) CHECK(started.count(id) == 1);
}

TEST_CASE("text pool: server.admission_threads 0 is a quarter of the hardware threads",
          "[admission]") {
  CHECK(text_pool_threads(3) == 3);
  const int hw = static_cast<int>(std::thread::hardware_concurrency());
  CHECK(text_pool_threads(0) == std::max(1, hw / 4));
}

}  // namespace courier_test_actors_admission_text_pool
