// cuBLASLt linear against the sim backend's linear, bf16 inputs rounded the same on both sides.
#include "gpu/cuda/gemm.hpp"

#include <cuda_runtime_api.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gpu/cuda/cuda_check.hpp"
#include "gpu/device.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_cuda_gemm {

using namespace courier;

namespace {

std::vector<float> random_bf16_values(std::size_t n, std::mt19937& rng, float scale) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = gpu::bf16_to_f32(gpu::f32_to_bf16(d(rng)));
  return v;
}

std::vector<std::uint16_t> to_bf16(const std::vector<float>& v) {
  std::vector<std::uint16_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = gpu::f32_to_bf16(v[i]);
  return out;
}

// The sim backend's x * w^T (+ bias), the reference.
std::vector<float> sim_linear(const std::vector<float>& x, const std::vector<float>& w,
                              const std::vector<float>& bias, std::int64_t m, std::int64_t n,
                              std::int64_t k) {
  auto dev = gpu::make_sim_device(1, 256);
  auto bx = dev->allocate(x.size() * 4), bw = dev->allocate(w.size() * 4),
       bo = dev->allocate(static_cast<std::size_t>(m * n) * 4);
  dev->upload(bx.data(), x.data(), x.size() * 4);
  dev->upload(bw.data(), w.data(), w.size() * 4);
  gpu::device_buffer bb;
  gpu::tensor_view bias_view;
  if (!bias.empty()) {
    bb = dev->allocate(bias.size() * 4);
    dev->upload(bb.data(), bias.data(), bias.size() * 4);
    bias_view = bb.view(gpu::dtype::f32, 1, n);
  }
  dev->linear(bx.view(gpu::dtype::f32, m, k), bw.view(gpu::dtype::f32, n, k), bias_view,
              bo.view(gpu::dtype::f32, m, n));
  std::vector<float> out(static_cast<std::size_t>(m * n));
  dev->download(out.data(), bo.data(), out.size() * 4);
  return out;
}

}  // namespace

TEST_CASE("cuda gemm: bf16 linear matches the sim op, with and without bias, bf16 and f32 out",
          "[gpu]") {
  std::mt19937 rng(3);
  struct shape {
    std::int64_t m, n, k;
  };
  for (const shape s :
       {shape{1, 896, 896}, shape{7, 4864, 896}, shape{33, 151936, 64}, shape{256, 1024, 4096}}) {
    for (bool with_bias : {false, true}) {
      INFO(s.m << "x" << s.n << "x" << s.k << (with_bias ? " with bias" : ""));
      const auto x = random_bf16_values(static_cast<std::size_t>(s.m * s.k), rng, 1.0f);
      const auto w = random_bf16_values(static_cast<std::size_t>(s.n * s.k), rng,
                                        1.0f / std::sqrt(static_cast<float>(s.k)));
      const auto bias = with_bias ? random_bf16_values(static_cast<std::size_t>(s.n), rng, 0.5f)
                                  : std::vector<float>{};
      const auto want = sim_linear(x, w, bias, s.m, s.n, s.k);
      if (!gpu::cuda::has_device()) {
        WARN("no GPU: skipped");
        return;
      }
      const auto xb = to_bf16(x), wb = to_bf16(w), bb = to_bf16(bias);
      void *dx, *dw, *dout;
      // The bias has the output's type, as cuBLASLt's bias epilogue requires (cublasLt.h: a bf16
      // D takes a bf16 bias, an f32 D an f32 one); its values are bf16-exact either way.
      void *db16 = nullptr, *db32 = nullptr;
      CUDA_CHECK(cudaMalloc(&dx, xb.size() * 2));
      CUDA_CHECK(cudaMalloc(&dw, wb.size() * 2));
      CUDA_CHECK(cudaMalloc(&dout, want.size() * 4));
      CUDA_CHECK(cudaMemcpy(dx, xb.data(), xb.size() * 2, cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaMemcpy(dw, wb.data(), wb.size() * 2, cudaMemcpyHostToDevice));
      if (with_bias) {
        CUDA_CHECK(cudaMalloc(&db16, bb.size() * 2));
        CUDA_CHECK(cudaMemcpy(db16, bb.data(), bb.size() * 2, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMalloc(&db32, bias.size() * 4));
        CUDA_CHECK(cudaMemcpy(db32, bias.data(), bias.size() * 4, cudaMemcpyHostToDevice));
      }
      for (bool autotune : {true, false}) {
        for (bool out_f32 : {false, true}) {
          INFO((autotune ? "timed" : "heuristic #0") << (out_f32 ? ", f32 out" : ", bf16 out"));
          gpu::cuda::gemm::options o;
          o.autotune = autotune;
          gpu::cuda::gemm g(o);
          g.run(dx, dw, out_f32 ? db32 : db16, dout, out_f32, s.m, s.n, s.k, nullptr);
          CUDA_CHECK(cudaDeviceSynchronize());
          std::vector<float> got(want.size());
          if (out_f32) {
            CUDA_CHECK(cudaMemcpy(got.data(), dout, got.size() * 4, cudaMemcpyDeviceToHost));
          } else {
            std::vector<std::uint16_t> h(want.size());
            CUDA_CHECK(cudaMemcpy(h.data(), dout, h.size() * 2, cudaMemcpyDeviceToHost));
            for (std::size_t i = 0; i < h.size(); ++i) got[i] = gpu::bf16_to_f32(h[i]);
          }
          std::size_t bad = 0;
          for (std::size_t i = 0; i < got.size(); ++i) {
            const float tol = (out_f32 ? 2e-3f : 1e-2f) * std::max(1.0f, std::fabs(want[i]));
            if (!(std::fabs(got[i] - want[i]) <= tol)) ++bad;
          }
          CHECK(bad == 0);
        }
      }
      cudaFree(dx);
      cudaFree(dw);
      cudaFree(dout);
      if (db16) cudaFree(db16);
      if (db32) cudaFree(db32);
    }
  }
}

TEST_CASE("cuda gemm: autotuning keeps the fastest candidate, near-ties going to the earlier rank",
          "[cuda]") {
  using gpu::cuda::algo_time;
  using gpu::cuda::pick_algorithm;
  CHECK(pick_algorithm({}) == -1);
  CHECK(pick_algorithm({{0, 1.0f}}) == 0);
  // Clearly faster wins whatever its rank.
  CHECK(pick_algorithm({{0, 1.0f}, {1, 0.5f}, {2, 0.9f}}) == 1);
  // Within 2% of the fastest: a tie, and the earliest rank of the tied wins.
  CHECK(pick_algorithm({{0, 1.015f}, {1, 1.0f}}) == 0);
  CHECK(pick_algorithm({{0, 1.5f}, {1, 1.01f}, {2, 1.0f}, {3, 0.995f}}) == 1);
  // Just beyond 2%: not a tie.
  CHECK(pick_algorithm({{0, 1.03f}, {1, 1.0f}}) == 1);
  // The order of the list does not matter, only the ranks.
  CHECK(pick_algorithm({{3, 0.995f}, {2, 1.0f}, {1, 1.01f}, {0, 1.5f}}) == 1);
  // A candidate that could not be timed never wins.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(pick_algorithm({{0, nan}, {1, 2.0f}}) == 1);
  CHECK(pick_algorithm({{0, inf}, {1, nan}}) == -1);
}

TEST_CASE("cuda gemm: a shape first met while capturing a graph runs untimed in it, then is timed",
          "[gpu]") {
  std::mt19937 rng(5);
  const std::int64_t m = 5, n = 640, k = 256;
  const auto x = random_bf16_values(static_cast<std::size_t>(m * k), rng, 1.0f);
  const auto w = random_bf16_values(static_cast<std::size_t>(n * k), rng, 1.0f / 16);
  const auto want = sim_linear(x, w, {}, m, n, k);
  if (!gpu::cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  const auto xb = to_bf16(x), wb = to_bf16(w);
  void *dx, *dw, *dout;
  CUDA_CHECK(cudaMalloc(&dx, xb.size() * 2));
  CUDA_CHECK(cudaMalloc(&dw, wb.size() * 2));
  CUDA_CHECK(cudaMalloc(&dout, want.size() * 2));
  CUDA_CHECK(cudaMemcpy(dx, xb.data(), xb.size() * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dw, wb.data(), wb.size() * 2, cudaMemcpyHostToDevice));
  // cudaMemcpy from pageable memory returns once the bytes are staged, before they land (the
  // Runtime API's synchronization behavior), and the non-blocking stream below does not wait for
  // the legacy stream's copies: wait for them here.
  CUDA_CHECK(cudaDeviceSynchronize());
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  auto check_out = [&] {
    std::vector<std::uint16_t> h(want.size());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemcpy(h.data(), dout, h.size() * 2, cudaMemcpyDeviceToHost));
    std::size_t bad = 0;
    for (std::size_t i = 0; i < h.size(); ++i) {
      const float got = gpu::bf16_to_f32(h[i]);
      if (!(std::fabs(got - want[i]) <= 1e-2f * std::max(1.0f, std::fabs(want[i])))) ++bad;
    }
    CHECK(bad == 0);
  };
  gpu::cuda::gemm g;  // autotune on
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  g.run(dx, dw, nullptr, dout, false, m, n, k, stream);  // may not synchronize: no timing
  cudaGraph_t graph;
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  // On the gemm's stream: the legacy stream's cudaMemset is not ordered with a non-blocking
  // stream's work (the Runtime API's stream synchronization behavior).
  CUDA_CHECK(cudaMemsetAsync(dout, 0, want.size() * 2, stream));
  CUDA_CHECK(cudaGraphLaunch(exec, stream));
  check_out();
  CUDA_CHECK(cudaMemsetAsync(dout, 0, want.size() * 2, stream));
  g.run(dx, dw, nullptr, dout, false, m, n, k, stream);  // uncaptured: timed now
  check_out();
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaStreamDestroy(stream));
  cudaFree(dx);
  cudaFree(dw);
  cudaFree(dout);
}

}  // namespace courier_test_gpu_cuda_gemm
