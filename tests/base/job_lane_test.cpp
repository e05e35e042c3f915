// base/job_lane: jobs run off the caller's thread, in the order posted (one thread), all of them
// before the destructor returns; a job that throws does not stop the lane; run_all returns only
// once every job has ended, and runs its first on the caller; threads carry the lane's name.
#include "base/job_lane.hpp"

#include <pthread.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_base_job_lane {

using courier::base::job_lane;

std::string thread_name() {
  char name[16] = {};
  pthread_getname_np(pthread_self(), name, sizeof name);
  return name;
}

TEST_CASE("job lane: one thread runs jobs in order, on a thread of its own named for the lane",
          "[base]") {
  std::vector<int> order;
  std::set<std::thread::id> ran_on;
  std::string name;
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  {
    job_lane lane("courier-waiter", 1);
    CHECK(lane.num_threads() == 1);
    lane.post([gate] { gate.wait(); });  // holds the thread while the rest queue up
    for (int i = 0; i < 100; ++i) {
      lane.post([&, i] {
        order.push_back(i);  // one thread: no two jobs at once
        ran_on.insert(std::this_thread::get_id());
        if (i == 0) name = thread_name();
      });
    }
    CHECK(lane.num_queued() >= 100);
    release.set_value();
  }  // the destructor runs what is queued, then joins
  REQUIRE(order.size() == 100);
  for (int i = 0; i < 100; ++i) CHECK(order[static_cast<std::size_t>(i)] == i);
  CHECK(ran_on.size() == 1);
  CHECK(ran_on.count(std::this_thread::get_id()) == 0);
  CHECK(name == "courier-waiter");
}

TEST_CASE("job lane: a job that throws does not stop the lane; on_thread_start runs first on "
          "each thread; a long name is cut to Linux's 15 bytes",
          "[base]") {
  std::atomic<int> started{0}, ran{0};
  std::mutex mu;
  std::set<std::string> names;
  {
    job_lane lane("a-lane-with-a-long-name", 3, [&] { ++started; });
    CHECK(lane.num_threads() == 3);
    lane.post([] { throw std::runtime_error("a bug of the job"); });
    for (int i = 0; i < 30; ++i) {
      lane.post([&] {
        ++ran;
        std::lock_guard<std::mutex> lock(mu);
        names.insert(thread_name());
      });
    }
  }
  CHECK(started == 3);
  CHECK(ran == 30);
  CHECK(names == std::set<std::string>{std::string("a-lane-with-a-long-name").substr(0, 15)});
}

TEST_CASE("job lane: run_all runs the first job on the caller and returns once all have ended",
          "[base]") {
  job_lane lane("io", 2);
  std::atomic<int> ended{0};
  std::thread::id first_on;
  std::vector<std::function<void()>> jobs;
  jobs.push_back([&] {
    first_on = std::this_thread::get_id();
    ++ended;
  });
  for (int i = 0; i < 5; ++i) {
    jobs.push_back([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ++ended;
    });
  }
  jobs.push_back([] { throw std::runtime_error("counted as ended all the same"); });
  lane.run_all(std::move(jobs));
  CHECK(ended == 6);
  CHECK(first_on == std::this_thread::get_id());
  CHECK(lane.num_queued() == 0);
  lane.run_all({});  // nothing to run: returns at once
}

TEST_CASE("job lane: posting from jobs and from many threads loses nothing", "[base]") {
  std::atomic<int> ran{0};
  {
    job_lane lane("posting", 2);
    std::vector<std::thread> posters;
    for (int t = 0; t < 4; ++t) {
      posters.emplace_back([&] {
        for (int i = 0; i < 250; ++i) lane.post([&] { ++ran; });
      });
    }
    for (std::thread& t : posters) t.join();
    std::promise<void> inner_done;
    lane.post([&] { lane.post([&] { inner_done.set_value(); }); });
    inner_done.get_future().wait();
  }
  CHECK(ran == 1000);
}

}  // namespace courier_test_base_job_lane
