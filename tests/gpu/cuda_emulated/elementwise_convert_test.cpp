// gpu/cuda's f32 <-> bf16 conversion kernels on the CUDA emulator, against the host's
// gpu::f32_to_bf16 and gpu::bf16_to_f32, bit for bit, on both launch paths: 16-byte aligned
// pointers (four elements a thread) and misaligned ones (one a thread).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "gpu/cuda/kernels/elementwise.hpp"
#include "gpu/dtype.hpp"

// This file's own namespace, as every test file's.
namespace courier_test_gpu_cuda_emulated_elementwise_convert {

using namespace courier;

namespace {

std::vector<float> values(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = std::ldexp(static_cast<float>(i % 97) - 48.3f, static_cast<int>(i % 21) - 10);
  }
  v[3] = std::numeric_limits<float>::quiet_NaN();
  v[5] = std::numeric_limits<float>::infinity();
  v[7] = -0.0f;
  v[11] = 1.00390625f;  // exactly halfway between two bf16: rounds to even
  return v;
}

}  // namespace

TEST_CASE("emulated cuda: f32 to bf16 and back, aligned and misaligned", "[emulated]") {
  for (const std::size_t offset : {0u, 1u}) {  // 0: the 16-byte path; 1: one element a thread
    INFO("offset " << offset);
    const std::size_t n = 1000;
    alignas(16) static float in[1100];
    alignas(16) static std::uint16_t half[1100];
    alignas(16) static float back[1100];
    const std::vector<float> v = values(n);
    std::memcpy(in + offset, v.data(), n * sizeof(float));
    std::memset(half, 0xCD, sizeof half);
    std::memset(back, 0xCD, sizeof back);
    REQUIRE(gpu::cuda::launch_convert_f32_to_bf16(in + offset, half + offset, n, nullptr) ==
            cudaSuccess);
    REQUIRE(gpu::cuda::launch_convert_bf16_to_f32(half + offset, back + offset, n, nullptr) ==
            cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint16_t want = gpu::f32_to_bf16(v[i]);
      if (half[offset + i] != want) ++wrong;
      const float w = gpu::bf16_to_f32(want);
      if (std::memcmp(&back[offset + i], &w, sizeof w) != 0) ++wrong;
    }
    CHECK(wrong == 0);
  }
}

}  // namespace courier_test_gpu_cuda_emulated_elementwise_convert
