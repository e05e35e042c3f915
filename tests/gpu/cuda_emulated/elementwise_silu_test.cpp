// gpu/cuda's silu_mul kernel on the CUDA emulator, on each of its vector widths (8, 2 and 1
// elements a thread, chosen by the row length and the pointers' alignment): every output element
// is silu(gate) * up of its own row and column, computed in f32 and rounded to bf16 once, as the
// host computes it with the same expf.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "gpu/cuda/kernels/elementwise.hpp"
#include "gpu/dtype.hpp"

// This file's own namespace, as every test file's.
namespace courier_test_gpu_cuda_emulated_elementwise_silu {

using namespace courier;

TEST_CASE("emulated cuda: silu_mul on every vector width", "[emulated]") {
  for (const std::int64_t inter : {16, 6, 5}) {  // widths 8, 2, 1
    INFO("intermediate " << inter);
    const std::int64_t rows = 3;
    alignas(16) static std::uint16_t gate_up[3 * 2 * 16];
    alignas(16) static std::uint16_t out[3 * 16 + 8];
    for (std::int64_t i = 0; i < rows * 2 * inter; ++i) {
      gate_up[i] = gpu::f32_to_bf16(static_cast<float>(i % 13) * 0.37f - 2.1f);
    }
    for (auto& o : out) o = 0xCDCD;
    REQUIRE(gpu::cuda::launch_silu_mul(gate_up, out, rows, inter, nullptr) == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    std::int64_t wrong = 0;
    for (std::int64_t t = 0; t < rows; ++t) {
      for (std::int64_t c = 0; c < inter; ++c) {
        const float g = gpu::bf16_to_f32(gate_up[t * 2 * inter + c]);
        const float u = gpu::bf16_to_f32(gate_up[t * 2 * inter + inter + c]);
        const float want = g / (1.0f + std::exp(-g)) * u;
        if (out[t * inter + c] != gpu::f32_to_bf16(want)) ++wrong;
      }
    }
    CHECK(wrong == 0);
    CHECK(out[rows * inter] == 0xCDCD);  // nothing past the output
  }
}

}  // namespace courier_test_gpu_cuda_emulated_elementwise_silu
