// gpu/cuda's fill_random kernel on the CUDA emulator: each element is gpu::random_fill_value of
// its index rounded to bf16, as the host computes it; the grid-stride loop covers n elements
// past what one grid's threads hold.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "gpu/cuda/kernels/fill.hpp"
#include "gpu/dtype.hpp"
#include "gpu/random_fill.hpp"

// This file's own namespace, as every test file's.
namespace courier_test_gpu_cuda_emulated_fill {

using namespace courier;

TEST_CASE("emulated cuda: fill_random writes random_fill_value of each index", "[emulated]") {
  const std::int64_t n = 3000;
  std::vector<std::uint16_t> out(static_cast<std::size_t>(n) + 8, 0xCDCD);
  REQUIRE(gpu::cuda::launch_fill_random(out.data(), n, 42, 0.5f, 0.25f, nullptr) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = gpu::random_fill_value(42, static_cast<std::uint64_t>(i), 0.5f, 0.25f);
    if (out[static_cast<std::size_t>(i)] != gpu::f32_to_bf16(v)) ++wrong;
  }
  CHECK(wrong == 0);
  CHECK(out[static_cast<std::size_t>(n)] == 0xCDCD);  // nothing past n
  CHECK(gpu::cuda::launch_fill_random(nullptr, 4, 1, 0, 1, nullptr) == cudaErrorInvalidValue);
}

}  // namespace courier_test_gpu_cuda_emulated_fill
