// The CUDA random fill gives, element for element, the bf16 rounding of the value the sim fill
// gives in f32: both backends build the same random-weight model from the same seed.
#include "gpu/cuda/kernels/fill.hpp"

#include <cuda_runtime_api.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "gpu/cuda/cuda_check.hpp"
#include "gpu/device.hpp"
#include "gpu/random_fill.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_cuda_fill {

using namespace courier;

TEST_CASE("cuda fill: random weights are the bf16 of the sim's values", "[gpu]") {
  const std::int64_t n = 1'000'003;  // not a multiple of the block
  auto sim = gpu::make_sim_device(1, 64);
  gpu::device_buffer ref = sim->allocate(static_cast<std::size_t>(n) * 4);
  sim->fill_random(ref.view(gpu::dtype::f32, 1, n), 42, 1.0f, 0.1f);
  std::vector<float> want(static_cast<std::size_t>(n));
  sim->download(want.data(), ref.data(), want.size() * 4);
  // The host formula is the sim's, and the values span the range asked for.
  CHECK(want[17] == gpu::random_fill_value(42, 17, 1.0f, 0.1f));
  CHECK(*std::min_element(want.begin(), want.end()) >= 0.9f);
  CHECK(*std::max_element(want.begin(), want.end()) < 1.1f);
  if (!gpu::cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  void* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, static_cast<std::size_t>(n) * 2));
  CUDA_CHECK(gpu::cuda::launch_fill_random(d, n, 42, 1.0f, 0.1f, nullptr));
  std::vector<std::uint16_t> got(static_cast<std::size_t>(n));
  CUDA_CHECK(cudaMemcpy(got.data(), d, got.size() * 2, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(d));
  for (std::int64_t i = 0; i < n; ++i) {
    REQUIRE(got[static_cast<std::size_t>(i)] == gpu::f32_to_bf16(want[static_cast<std::size_t>(i)]));
  }
}

}  // namespace courier_test_gpu_cuda_fill
