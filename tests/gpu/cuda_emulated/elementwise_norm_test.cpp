// gpu/cuda's rms_norm and add_rms_norm kernels on the CUDA emulator, on each vector width, against
// elementwise.hpp's contract computed in double on the host: out = w * (x / sqrt(mean(x^2) +
// eps)), rounded to bf16 once, within one bf16 step (the kernel sums in f32 in its own order);
// add_rms_norm first stores residual + x rounded to bf16, exactly, and normalises that.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "gpu/cuda/kernels/elementwise.hpp"
#include "gpu/dtype.hpp"

// This file's own namespace, as every test file's.
namespace courier_test_gpu_cuda_emulated_elementwise_norm {

using namespace courier;

namespace {

float bf(std::uint16_t h) { return gpu::bf16_to_f32(h); }

// Whether a and b are at most one bf16 step apart (the same sign, adjacent bit patterns).
bool within_one_step(std::uint16_t a, std::uint16_t b) {
  if (a == b) return true;
  if ((a & 0x8000) != (b & 0x8000)) return bf(a) == 0.0f && bf(b) == 0.0f;
  return (a > b ? a - b : b - a) == 1;
}

}  // namespace

TEST_CASE("emulated cuda: rms_norm and add_rms_norm on every vector width", "[emulated]") {
  for (const std::int64_t hidden : {64, 70, 45}) {  // widths 8, 2, 1
    INFO("hidden " << hidden);
    const std::int64_t rows = 3;
    const float eps = 1e-6f;
    alignas(16) static std::uint16_t x[3 * 70], w[70], out[3 * 70], res[3 * 70];
    for (std::int64_t i = 0; i < rows * hidden; ++i) {
      x[i] = gpu::f32_to_bf16(std::sin(static_cast<float>(i) * 0.7f) * 3.0f);
      res[i] = gpu::f32_to_bf16(std::cos(static_cast<float>(i) * 0.3f));
    }
    for (std::int64_t c = 0; c < hidden; ++c) w[c] = gpu::f32_to_bf16(0.5f + 0.01f * c);
    const std::vector<std::uint16_t> res_before(res, res + rows * hidden);
    auto check_rows = [&](const std::uint16_t* in) {
      std::int64_t wrong = 0;
      for (std::int64_t t = 0; t < rows; ++t) {
        double ss = 0;
        for (std::int64_t c = 0; c < hidden; ++c) {
          const double v = bf(in[t * hidden + c]);
          ss += v * v;
        }
        const double inv = 1.0 / std::sqrt(ss / hidden + eps);
        for (std::int64_t c = 0; c < hidden; ++c) {
          const double v = bf(w[c]) * (bf(in[t * hidden + c]) * inv);
          const std::uint16_t want = gpu::f32_to_bf16(static_cast<float>(v));
          if (!within_one_step(out[t * hidden + c], want)) ++wrong;
        }
      }
      return wrong;
    };
    REQUIRE(gpu::cuda::launch_rms_norm(x, w, eps, out, rows, hidden, nullptr) == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(check_rows(x) == 0);
    REQUIRE(gpu::cuda::launch_add_rms_norm(res, x, w, eps, out, rows, hidden, nullptr) ==
            cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    std::int64_t wrong_sum = 0;
    for (std::int64_t i = 0; i < rows * hidden; ++i) {
      const float sum = bf(res_before[static_cast<std::size_t>(i)]) + bf(x[i]);
      if (res[i] != gpu::f32_to_bf16(sum)) ++wrong_sum;
    }
    CHECK(wrong_sum == 0);
    CHECK(check_rows(res) == 0);
  }
}

}  // namespace courier_test_gpu_cuda_emulated_elementwise_norm
