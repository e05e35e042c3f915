// The emulator's threads against the CUDA C++ Programming Guide, independent of courier's
// kernels: __syncthreads orders shared-memory writes before reads across the block; the warp
// shuffles' source lanes (segments of `width`, own value past a segment's edge); the votes;
// blocks in a random order; and what the hardware hangs on or leaves undefined is an error.
#include "gpu/cuda_emu/block_runner.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <vector>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_cuda_emu_block_runner {

namespace emu = courier::cuda_emu;
using Catch::Matchers::Contains;

namespace {

int linear_tid() {
  const emu::dim3& t = emu::thread_idx();
  const emu::dim3& d = emu::block_dim();
  return static_cast<int>(t.x + d.x * (t.y + d.y * t.z));
}

emu::launch_config one_block(unsigned threads, std::size_t shared = 0) {
  emu::launch_config c;
  c.block = {threads, 1, 1};
  c.shared_bytes = shared;
  return c;
}

// The message of the emu_error `run` throws ("" if none).
template <class F>
std::string error_of(const emu::launch_config& c, F body) {
  try {
    emu::run_grid(c, body);
  } catch (const emu::emu_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("cuda emu: a block's tree reduction in shared memory, ordered by __syncthreads",
          "[cuda_emu]") {
  emu::launch_config c;
  c.grid = {3, 1, 1};
  c.block = {16, 4, 4};  // 256 threads, three dimensions
  c.shared_bytes = 256 * sizeof(int);
  std::vector<int> sums(3, -1);
  emu::run_grid(c, [&] {
    int* s = static_cast<int*>(emu::dynamic_shared());
    const int t = linear_tid();
    s[t] = t + 1000 * static_cast<int>(emu::block_idx().x);
    emu::syncthreads();
    for (int half = 128; half > 0; half /= 2) {
      if (t < half) s[t] += s[t + half];
      emu::syncthreads();
    }
    if (t == 0) sums[emu::block_idx().x] = s[0];
  });
  // sum of t over 0..255 plus 256 * 1000 * block
  CHECK(sums == std::vector<int>{32640, 32640 + 256000, 32640 + 512000});
}

TEST_CASE("cuda emu: warp shuffles take the source lanes the Guide defines", "[cuda_emu]") {
  struct lane_out {
    int bfly_sum, down1_w8, up2_w8, xor8_w8, idx5_w16, idx_neg;
  };
  std::vector<lane_out> out(64);
  emu::run_grid(one_block(64), [&] {
    const int t = linear_tid();
    const int lane = emu::lane_id();
    int v = lane;
    for (int m = 16; m > 0; m /= 2) v += emu::shfl_xor_sync(0xffffffffu, v, m);
    lane_out& o = out[t];
    o.bfly_sum = v;
    o.down1_w8 = emu::shfl_down_sync(0xffffffffu, lane, 1, 8);
    o.up2_w8 = emu::shfl_up_sync(0xffffffffu, lane, 2, 8);
    o.xor8_w8 = emu::shfl_xor_sync(0xffffffffu, lane, 8, 8);
    o.idx5_w16 = emu::shfl_sync(0xffffffffu, lane, 5, 16);
    o.idx_neg = emu::shfl_sync(0xffffffffu, lane * 10, -1);  // srcLane % width: lane 31
  });
  for (int t = 0; t < 64; ++t) {
    INFO("thread " << t);
    const int lane = t % 32;
    CHECK(out[t].bfly_sum == 496);                                 // 0 + 1 + ... + 31
    CHECK(out[t].down1_w8 == (lane % 8 == 7 ? lane : lane + 1));   // own value past the end
    CHECK(out[t].up2_w8 == (lane % 8 < 2 ? lane : lane - 2));      // own value before the start
    // xor 8 in segments of 8: a later segment gives the own value, an earlier one its lane.
    CHECK(out[t].xor8_w8 == ((lane ^ 8) >= (lane / 8 + 1) * 8 ? lane : lane ^ 8));
    CHECK(out[t].idx5_w16 == lane / 16 * 16 + 5);
    CHECK(out[t].idx_neg == 310);
  }
}

TEST_CASE("cuda emu: votes, and collectives of disjoint masks in one warp", "[cuda_emu]") {
  std::vector<unsigned> ballots(32);
  std::vector<int> any(32), all(32), halves(32);
  emu::run_grid(one_block(32), [&] {
    const int lane = emu::lane_id();
    ballots[lane] = emu::ballot_sync(0xffffffffu, lane % 3 == 0);
    any[lane] = emu::any_sync(0xffffffffu, lane == 17);
    all[lane] = emu::all_sync(0xffffffffu, lane < 31);
    // Two groups at once, each with its own mask.
    const unsigned mask = lane < 16 ? 0x0000ffffu : 0xffff0000u;
    halves[lane] = emu::shfl_sync(mask, lane, lane < 16 ? 0 : 16);
    emu::syncwarp();
  });
  unsigned want = 0;
  for (int l = 0; l < 32; l += 3) want |= 1u << l;
  for (int l = 0; l < 32; ++l) {
    CHECK(ballots[l] == want);
    CHECK(any[l] == 1);
    CHECK(all[l] == 0);
    CHECK(halves[l] == (l < 16 ? 0 : 16));
  }
}

TEST_CASE("cuda emu: blocks run in a seeded random order, threads each once, shared memory "
          "starts as 0xCD",
          "[cuda_emu]") {
  auto order = [](std::uint64_t seed) {
    emu::launch_config c;
    c.grid = {4, 4, 1};
    c.block = {8, 1, 1};
    c.shared_bytes = 64;
    c.seed = seed;
    std::vector<int> seen, runs(16 * 8, 0);
    bool garbage = true;
    emu::run_grid(c, [&] {
      const int b = static_cast<int>(emu::block_idx().x + 4 * emu::block_idx().y);
      ++runs[b * 8 + linear_tid()];
      if (linear_tid() == 0) {
        seen.push_back(b);
        const auto* s = static_cast<const unsigned char*>(emu::dynamic_shared());
        garbage = garbage && std::all_of(s, s + 64, [](unsigned char x) { return x == 0xCD; });
      }
    });
    CHECK(std::all_of(runs.begin(), runs.end(), [](int n) { return n == 1; }));
    CHECK(garbage);
    return seen;
  };
  const std::vector<int> a = order(1), b = order(2);
  std::vector<int> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> all(16);
  std::iota(all.begin(), all.end(), 0);
  CHECK(sorted == all);
  CHECK(a != all);  // not in index order
  CHECK(a != b);    // another seed, another order
  CHECK(order(1) == a);
}

TEST_CASE("cuda emu: what hangs or is undefined on hardware is an error naming it",
          "[cuda_emu]") {
  // Half the block returns before a __syncthreads the other half waits at.
  CHECK_THAT(error_of(one_block(64),
                      [] {
                        if (linear_tid() >= 32) return;
                        emu::syncthreads();
                      }),
             Contains("__syncthreads") && Contains("32 of the block's 64 threads exited"));
  // One warp at __syncthreads, the other at a shuffle its lanes never all reach.
  CHECK_THAT(error_of(one_block(64),
                      [] {
                        if (linear_tid() < 32) {
                          emu::syncthreads();
                        } else if (emu::lane_id() != 5) {
                          emu::shfl_sync(0xffffffffu, 1, 0);
                        } else {
                          emu::syncthreads();
                        }
                      }),
             Contains("no thread can go on"));
  // A mask naming a lane that exited.
  CHECK_THAT(error_of(one_block(32),
                      [] {
                        if (emu::lane_id() == 3) return;
                        emu::ballot_sync(0xffffffffu, 1);
                      }),
             Contains("names lane 3, which exited"));
  // A shuffle reading a lane outside the mask; a mask without the caller; a bad width.
  CHECK_THAT(error_of(one_block(32),
                      [] { emu::shfl_sync(0x0000ffffu | (1u << emu::lane_id()), 1, 20); }),
             Contains("not in the mask"));
  CHECK_THAT(error_of(one_block(32), [] { emu::syncwarp(emu::lane_id() == 0 ? 2u : 0xffffffffu); }),
             Contains("without itself"));
  CHECK_THAT(error_of(one_block(32), [] { emu::shfl_xor_sync(0xffffffffu, 1, 1, 3); }),
             Contains("width 3"));
  // A mask naming lanes a 16-thread warp does not have.
  CHECK_THAT(error_of(one_block(16), [] { emu::syncwarp(0xffffffffu); }),
             Contains("does not have"));
  // Different collectives under one mask.
  CHECK_THAT(error_of(one_block(32),
                      [] {
                        if (emu::lane_id() < 16) {
                          emu::ballot_sync(0xffffffffu, 1);
                        } else {
                          emu::any_sync(0xffffffffu, 1);
                        }
                      }),
             Contains("different warp collectives"));
  // Launch configurations the runtime refuses.
  emu::launch_config many;
  many.block = {64, 17, 1};  // each dimension within bounds, 1,088 threads
  CHECK_THAT(error_of(many, [] {}), Contains("more than 1024 threads"));
  CHECK_THAT(error_of(one_block(1025), [] {}), Contains("a block dimension over"));
  emu::launch_config tall;
  tall.block = {1, 1, 65};
  CHECK_THAT(error_of(tall, [] {}), Contains("cudaErrorInvalidConfiguration"));
  emu::launch_config wide;
  wide.grid = {1, 70000, 1};
  CHECK_THAT(error_of(wide, [] {}), Contains("grid dimension"));
  // Outside a kernel, and a launch from inside one.
  CHECK_THROWS_AS(emu::syncthreads(), emu::emu_error);
  CHECK_THAT(error_of(one_block(1), [] { emu::run_grid(one_block(1), [] {}); }),
             Contains("inside a kernel"));
}

TEST_CASE("cuda emu: an exception a thread throws ends the grid and comes out of the launch",
          "[cuda_emu]") {
  int ran = 0;
  CHECK_THROWS_WITH(emu::run_grid(one_block(64),
                                  [&] {
                                    ++ran;
                                    if (linear_tid() == 40) throw std::runtime_error("boom");
                                    emu::syncthreads();
                                  }),
                    "boom");
  CHECK(ran <= 64);
  // The runner is usable again afterwards.
  int after = 0;
  emu::run_grid(one_block(4), [&] { ++after; });
  CHECK(after == 4);
}

}  // namespace courier_test_gpu_cuda_emu_block_runner
