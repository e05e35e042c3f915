// The CUDA device's pieces for running ahead of the host: copy_tokens (a step's ids fed from the
// samples of the step before), count_penalty_tokens (the samples counted into the penalty lists
// kept on the device), timestamps (timing events, read without waiting in between) and the copy
// stream (copy_async).
// Skipped without a GPU.
#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "gpu/cuda/cuda_check.hpp"
#include "gpu/cuda/cuda_device.hpp"
#include "tests/support/count_penalties_check.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_cuda_device_async {

using namespace courier;

TEST_CASE("cuda copy_tokens writes each source token to its destination", "[gpu]") {
  if (!gpu::cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  auto dev = gpu::cuda::make_cuda_device(0);
  const std::vector<std::int32_t> src = {11, 22, 33, 44, 55}, src_index = {4, 0, 2},
                                  dst_index = {1, 6, 3};
  std::vector<std::int32_t> dst(8, -1);
  auto put = [&](const std::vector<std::int32_t>& v) {
    gpu::device_buffer b = dev->allocate(v.size() * sizeof(std::int32_t));
    dev->upload(b.data(), v.data(), v.size() * sizeof(std::int32_t));
    return b;
  };
  gpu::device_buffer s = put(src), si = put(src_index), d = put(dst), di = put(dst_index);
  dev->copy_tokens(static_cast<const std::int32_t*>(s.data()),
                   static_cast<const std::int32_t*>(si.data()), static_cast<std::int32_t*>(d.data()),
                   static_cast<const std::int32_t*>(di.data()), 3);
  dev->download(dst.data(), d.data(), dst.size() * sizeof(std::int32_t));
  CHECK(dst == std::vector<std::int32_t>{-1, 55, -1, 33, -1, -1, 11, -1});
}

TEST_CASE("cuda count_penalty_tokens: counts a listed token, appends a new one, leaves a full "
          "list as it is", "[gpu]") {
  if (!gpu::cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  auto dev = gpu::cuda::make_cuda_device(0);
  test::check_count_penalty_tokens(*dev);
}

TEST_CASE("cuda timestamps: the time between two covers the work enqueued between them", "[gpu]") {
  if (!gpu::cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  auto dev = gpu::cuda::make_cuda_device(0);
  const std::int64_t small = 1 << 10, large = std::int64_t{1} << 28;  // 2 KB and 512 MB of bf16
  gpu::device_buffer buf = dev->allocate(static_cast<std::size_t>(large) * 2);
  auto time_fill = [&](std::int64_t n) {
    auto a = dev->timestamp();
    dev->fill_random(buf.view(gpu::dtype::bf16, 1, n), 1, 0.0f, 1.0f);
    auto b = dev->timestamp();
    return dev->elapsed_ms(*a, *b);  // waits for b
  };
  (void)time_fill(large);  // warm
  const double t_small = time_fill(small), t_large = time_fill(large);
  CHECK(t_small >= 0);
  // Writing 512 MB takes well over 0.05 ms at any HBM bandwidth, and more than 2 KB does.
  CHECK(t_large > 0.05);
  CHECK(t_large > t_small);
}

TEST_CASE("cuda copy_device moves bytes between device memory and allocate_host memory, in "
          "stream order (a hybrid's snapshot host tier)",
          "[gpu]") {
  if (!gpu::cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  auto dev = gpu::cuda::make_cuda_device(0);
  const std::size_t n = 1 << 20;
  std::shared_ptr<void> host = dev->allocate_host(n), back = dev->allocate_host(n);
  auto* h = static_cast<std::uint8_t*>(host.get());
  for (std::size_t i = 0; i < n; ++i) h[i] = static_cast<std::uint8_t>(i * 7 + 3);
  gpu::device_buffer a = dev->allocate(n), b = dev->allocate(n);
  dev->copy_device(a.data(), host.get(), n);    // host -> device
  dev->copy_device(b.data(), a.data(), n);      // device -> device
  dev->copy_device(back.get(), b.data(), n);    // device -> host, after the two before
  dev->synchronize();
  CHECK(std::memcmp(back.get(), host.get(), n) == 0);
}

TEST_CASE("cuda copy_async: the copy stream starts after the work enqueued before it, and the "
          "compute stream does not wait for it (the KV tier's copies back)",
          "[gpu]") {
  if (!gpu::cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  auto dev = gpu::cuda::make_cuda_device(0);
  // After: a fill enqueued before writes the buffer; the copy, enqueued after it, wins.
  const std::size_t n = std::size_t{1} << 20, big = std::size_t{1} << 30;
  std::shared_ptr<void> host = dev->allocate_host(big), back = dev->allocate_host(n);
  auto* h = static_cast<std::uint8_t*>(host.get());
  for (std::size_t i = 0; i < big; i += 4096) h[i] = static_cast<std::uint8_t>(i / 4096 * 7 + 3);
  gpu::device_buffer a = dev->allocate(big);
  dev->fill_random(a.view(gpu::dtype::bf16, 1, static_cast<std::int64_t>(big / 2)), 1, 0.0f, 1.0f);
  auto first = dev->copy_async({{a.data(), host.get(), n}});
  first->wait();
  dev->download(back.get(), a.data(), n);
  CHECK(std::memcmp(back.get(), host.get(), n) == 0);
  // Beside: 1 GB over PCIe takes milliseconds; the compute stream, with nothing after the copy
  // was enqueued, is done long before it.
  auto copy = dev->copy_async({{a.data(), host.get(), big}});
  dev->synchronize();
  CHECK_FALSE(copy->ready());
  // The query said "not ready", which the runtime keeps as the thread's last error: ready() must
  // clear it, or the next launcher's cudaGetLastError reports it as its own failure.
  CHECK(cudaGetLastError() == cudaSuccess);
  copy->wait();
  CHECK(copy->ready());
  dev->download(back.get(), static_cast<std::uint8_t*>(a.data()) + big - n, n);
  CHECK(std::memcmp(back.get(), h + big - n, n) == 0);
}

TEST_CASE("cuda pending samples: a thread that waits for another GPU's samples keeps its own "
          "current device",
          "[gpu]") {
  int count = 0;
  if (!gpu::cuda::has_device() || cudaGetDeviceCount(&count) != cudaSuccess || count < 2) {
    WARN("fewer than two GPUs: skipped");
    return;
  }
  auto dev = gpu::cuda::make_cuda_device(1);
  const std::int64_t vocab = 64;
  std::vector<float> logits(static_cast<std::size_t>(vocab), 0.0f);
  logits[17] = 5.0f;
  gpu::device_buffer l = dev->allocate(logits.size() * sizeof(float)), token = dev->allocate(4);
  dev->upload(l.data(), logits.data(), logits.size() * sizeof(float));
  gpu::sampling_batch greedy;
  greedy.rows.resize(1);
  auto pending = dev->sample_async(l.view(gpu::dtype::f32, 1, vocab), greedy,
                                   static_cast<std::int32_t*>(token.data()));
  // The engine's completion waiter is such a thread: it works with device 0 current.
  int before = -1, after = -1;
  std::thread waiter([&] {
    (void)cudaSetDevice(0);
    (void)cudaGetDevice(&before);
    pending->wait();
    (void)cudaGetDevice(&after);
  });
  waiter.join();
  CHECK(before == 0);
  CHECK(after == 0);
  const std::vector<gpu::sample_result> results = pending->take();
  REQUIRE(results.size() == 1);
  CHECK(results[0].token == 17);
}

}  // namespace courier_test_gpu_cuda_device_async
