// NCCL's collectives between two GPUs of this process (tensor parallelism on CUDA), against the
// sums and layouts they must give. Needs two GPUs: skipped (with a warning) on fewer.
#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gpu/cuda/cuda_device.hpp"
#include "gpu/dtype.hpp"
#ifdef COURIER_HAVE_NCCL
#include "gpu/cuda/nccl_collectives.hpp"
#endif

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_cuda_nccl {

using namespace courier;

#ifdef COURIER_HAVE_NCCL
// Runs body(device, rank) on each rank's thread, its device bound and in the NCCL group of two
// GPUs; returns what a rank threw ("" for none: its CUDA calls throw on a device fault).
std::vector<std::string> on_two_ranks(const std::function<void(gpu::device&, int)>& body) {
  std::vector<std::unique_ptr<gpu::device>> devs;
  std::vector<gpu::device*> raw;
  for (int r = 0; r < 2; ++r) {
    devs.push_back(gpu::cuda::make_cuda_device(r));
    raw.push_back(devs.back().get());
  }
  const auto group = gpu::cuda::make_nccl_group(raw);
  std::vector<std::string> failures(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      try {
        gpu::device& d = *devs[static_cast<std::size_t>(r)];
        d.bind_thread();
        d.join_group(group[static_cast<std::size_t>(r)]);
        body(d, r);
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(r)] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return failures;
}
#endif

TEST_CASE("nccl: all-reduce sums bf16 rows and all-gather puts each rank's columns in place",
          "[gpu]") {
#ifndef COURIER_HAVE_NCCL
  WARN("built without NCCL: skipped");
#else
  if (gpu::cuda::visible_gpus() < 2) {
    WARN("fewer than two GPUs: skipped");
    return;
  }
  constexpr std::int64_t R = 3, C = 5;
  std::vector<std::vector<float>> sums(2), gathered(2);
  const auto failures = on_two_ranks([&](gpu::device& d, int r) {
    // Small integers: exact in bf16, so the sum is exact whatever NCCL's order.
    std::vector<std::uint16_t> x;
    for (std::int64_t i = 0; i < R * C; ++i) x.push_back(gpu::f32_to_bf16(float(i + 10 * r)));
    gpu::device_buffer xb = d.allocate(x.size() * 2);
    d.upload(xb.data(), x.data(), x.size() * 2);
    d.all_reduce_sum(xb.view(gpu::dtype::bf16, R, C));
    d.download(x.data(), xb.data(), x.size() * 2);
    for (std::uint16_t v : x) sums[static_cast<std::size_t>(r)].push_back(gpu::bf16_to_f32(v));
    std::vector<float> in;
    for (std::int64_t i = 0; i < R * C; ++i) in.push_back(float(100 * r + i));
    gpu::device_buffer ib = d.allocate(in.size() * 4), ob = d.allocate(in.size() * 8);
    d.upload(ib.data(), in.data(), in.size() * 4);
    d.all_gather_cols(ib.view(gpu::dtype::f32, R, C), ob.view(gpu::dtype::f32, R, 2 * C));
    std::vector<float> out(static_cast<std::size_t>(2 * R * C));
    d.download(out.data(), ob.data(), out.size() * 4);
    gathered[static_cast<std::size_t>(r)] = out;
  });
  for (int r = 0; r < 2; ++r) {
    INFO("rank " << r);
    REQUIRE(failures[static_cast<std::size_t>(r)].empty());
    for (std::int64_t i = 0; i < R * C; ++i) {
      CHECK(sums[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)] == float(2 * i + 10));
    }
    for (std::int64_t row = 0; row < R; ++row) {
      for (std::int64_t c = 0; c < 2 * C; ++c) {
        const float want = float(100 * (c / C) + row * C + c % C);
        CHECK(gathered[static_cast<std::size_t>(r)][static_cast<std::size_t>(row * 2 * C + c)] ==
              want);
      }
    }
  }
#endif
}

TEST_CASE("nccl: a graph that gathers columns replays them after a larger gather outside it "
          "(its landing place stays where the graph writes it)",
          "[gpu]") {
#ifndef COURIER_HAVE_NCCL
  WARN("built without NCCL: skipped");
#else
  if (gpu::cuda::visible_gpus() < 2) {
    WARN("fewer than two GPUs: skipped");
    return;
  }
  constexpr std::int64_t C = 4, small = 2, large = 64;  // rows: a decode step, then a prefill
  std::vector<std::vector<float>> replayed(2);
  const auto failures = on_two_ranks([&](gpu::device& d, int r) {
    std::vector<float> in;
    for (std::int64_t i = 0; i < large * C; ++i) in.push_back(float(1000 * r + i));
    gpu::device_buffer ib = d.allocate(in.size() * 4), ob = d.allocate(in.size() * 8);
    d.upload(ib.data(), in.data(), in.size() * 4);
    const gpu::tensor_view small_in = ib.view(gpu::dtype::f32, small, C),
                           small_out = ob.view(gpu::dtype::f32, small, 2 * C);
    d.all_gather_cols(small_in, small_out);  // sizes the landing place, outside capture
    auto graph = d.capture([&] { d.all_gather_cols(small_in, small_out); });
    // A larger step outside the graph needs a larger landing place.
    d.all_gather_cols(ib.view(gpu::dtype::f32, large, C), ob.view(gpu::dtype::f32, large, 2 * C));
    d.fill_zero(ob.data(), in.size() * 8);
    graph->replay();
    std::vector<float> out(static_cast<std::size_t>(2 * small * C));
    d.download(out.data(), ob.data(), out.size() * 4);
    replayed[static_cast<std::size_t>(r)] = out;
  });
  for (int r = 0; r < 2; ++r) {
    INFO("rank " << r);
    REQUIRE(failures[static_cast<std::size_t>(r)].empty());
    for (std::int64_t row = 0; row < small; ++row) {
      for (std::int64_t c = 0; c < 2 * C; ++c) {
        const float want = float(1000 * (c / C) + row * C + c % C);
        CHECK(replayed[static_cast<std::size_t>(r)][static_cast<std::size_t>(row * 2 * C + c)] ==
              want);
      }
    }
  }
#endif
}

}  // namespace courier_test_gpu_cuda_nccl
