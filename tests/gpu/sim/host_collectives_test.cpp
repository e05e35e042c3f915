// The sim backend's collectives (N ranks as threads): every rank gets the sum of every rank's
// data in rank order (compared exactly with that sum computed alone), all-gather puts each
// rank's part at its place, many calls in a row stay in step, and an abort wakes every waiter.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "gpu/sim/host_collectives.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_sim_host_collectives {

using courier::gpu::host_collectives;

TEST_CASE("host collectives: all-reduce and all-gather across 1, 2, 3 and 4 ranks",
          "[sim]") {
  for (const std::int32_t size : {1, 2, 3, 4}) {
    INFO(size << " ranks");
    constexpr std::size_t n = 1000;
    constexpr int calls = 20;
    std::mt19937 rng(static_cast<unsigned>(size));
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    // inputs[call][rank]: each rank's data for each call.
    std::vector<std::vector<std::vector<float>>> inputs(calls);
    for (auto& c : inputs) {
      c.resize(static_cast<std::size_t>(size));
      for (auto& r : c) {
        for (std::size_t i = 0; i < n; ++i) r.push_back(u(rng));
      }
    }
    host_collectives group(size);
    std::vector<std::vector<std::vector<float>>> reduced(calls), gathered(calls);
    for (int c = 0; c < calls; ++c) {
      reduced[static_cast<std::size_t>(c)].resize(static_cast<std::size_t>(size));
      gathered[static_cast<std::size_t>(c)].resize(static_cast<std::size_t>(size));
    }
    std::vector<std::thread> ranks;
    for (std::int32_t r = 0; r < size; ++r) {
      ranks.emplace_back([&, r] {
        const auto ri = static_cast<std::size_t>(r);
        for (std::size_t c = 0; c < calls; ++c) {
          std::vector<float> data = inputs[c][ri];
          group.all_reduce_sum(r, data.data(), n);
          reduced[c][ri] = data;
          std::vector<float> out(n * static_cast<std::size_t>(size));
          group.all_gather(r, inputs[c][ri].data(), n, out.data());
          gathered[c][ri] = out;
        }
      });
    }
    for (auto& t : ranks) t.join();
    for (std::size_t c = 0; c < calls; ++c) {
      std::vector<float> want(inputs[c][0]);
      std::vector<float> all;
      for (std::size_t r = 1; r < static_cast<std::size_t>(size); ++r) {
        for (std::size_t i = 0; i < n; ++i) want[i] += inputs[c][r][i];
      }
      for (std::size_t r = 0; r < static_cast<std::size_t>(size); ++r) {
        all.insert(all.end(), inputs[c][r].begin(), inputs[c][r].end());
      }
      for (std::size_t r = 0; r < static_cast<std::size_t>(size); ++r) {
        INFO("call " << c << ", rank " << r);
        CHECK(reduced[c][r] == want);  // exactly: the same sums in the same order
        CHECK(gathered[c][r] == all);
      }
    }
  }
}

TEST_CASE("host collectives: an abort wakes the ranks waiting and fails later calls",
          "[sim]") {
  host_collectives group(3);
  std::vector<float> a(4, 1.0f), b(4, 2.0f);
  std::atomic<int> threw{0};
  std::thread t0([&] {
    try {
      group.all_reduce_sum(0, a.data(), a.size());
    } catch (const std::runtime_error&) {
      ++threw;
    }
  });
  std::thread t1([&] {
    try {
      group.all_reduce_sum(1, b.data(), b.size());
    } catch (const std::runtime_error&) {
      ++threw;
    }
  });
  // Rank 2 fails instead of joining: the others must not wait for it forever.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  group.abort("rank 2 failed to load its weights");
  t0.join();
  t1.join();
  CHECK(threw == 2);
  std::vector<float> c(4, 3.0f);
  CHECK_THROWS_WITH(group.all_reduce_sum(2, c.data(), c.size()),
                    Catch::Contains("rank 2 failed to load its weights"));
  CHECK_THROWS_AS(host_collectives(0), std::invalid_argument);
}

}  // namespace courier_test_gpu_sim_host_collectives
