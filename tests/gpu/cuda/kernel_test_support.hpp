#pragma once
// Helpers of the tests of the CUDA element-wise kernels (elementwise_test.cpp,
// elementwise_qkv_test.cpp): random inputs rounded to bf16, f32 tensors on a sim device (the
// reference side), bf16 device buffers (the CUDA side), and the comparisons.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "gpu/cuda/cuda_check.hpp"
#include "gpu/device.hpp"
#include "gpu/dtype.hpp"

namespace courier::test::kernels {

namespace gpu = courier::gpu;
namespace cuda = courier::gpu::cuda;
using bits = std::vector<std::uint16_t>;

// n uniform values in [lo, hi), each rounded to bf16.
inline std::vector<float> random_values(std::size_t n, float lo, float hi, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = gpu::bf16_to_f32(gpu::f32_to_bf16(dist(rng)));
  return v;
}

inline std::vector<std::int32_t> random_ints(std::size_t n, std::int32_t lo, std::int32_t hi_incl,
                                             std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int32_t> dist(lo, hi_incl);
  std::vector<std::int32_t> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

inline bits to_bf16(const std::vector<float>& v) {
  bits b(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) b[i] = gpu::f32_to_bf16(v[i]);
  return b;
}

// --- the sim side: f32 buffers of a sim device ---

struct sim_tensor {
  gpu::device_buffer buf;
  gpu::tensor_view view;
};

inline sim_tensor sim_put(gpu::device& d, const std::vector<float>& v, std::int64_t rows,
                          std::int64_t cols) {
  sim_tensor t;
  t.buf = d.allocate(v.size() * sizeof(float));
  d.upload(t.buf.data(), v.data(), v.size() * sizeof(float));
  t.view = t.buf.view(gpu::dtype::f32, rows, cols);
  return t;
}

template <class T>
gpu::device_buffer sim_put_raw(gpu::device& d, const std::vector<T>& v) {
  gpu::device_buffer b = d.allocate(v.size() * sizeof(T));
  d.upload(b.data(), v.data(), v.size() * sizeof(T));
  return b;
}

inline std::vector<float> sim_get(gpu::device& d, const sim_tensor& t) {
  std::vector<float> v(static_cast<std::size_t>(t.view.numel()));
  d.download(v.data(), t.buf.data(), v.size() * sizeof(float));
  return v;
}

// --- the CUDA side ---

struct cuda_free {
  void operator()(void* p) const noexcept { (void)cudaFree(p); }
};
using cuda_buffer = std::unique_ptr<void, cuda_free>;

template <class T>
cuda_buffer cuda_put(const std::vector<T>& v) {
  void* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(1, v.size() * sizeof(T))));
  cuda_buffer b(p);
  CUDA_CHECK(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return b;
}

template <class T>
std::vector<T> cuda_get(const cuda_buffer& b, std::size_t n) {
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<T> v(n);
  CUDA_CHECK(cudaMemcpy(v.data(), b.get(), n * sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

// Every element NaN-free and within rel * max(1, |want|) of want.
inline void require_close(const bits& got, const std::vector<float>& want, float rel) {
  REQUIRE(got.size() == want.size());
  std::size_t bad = 0, first_bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float g = gpu::bf16_to_f32(got[i]);
    const bool ok =
        !std::isnan(g) && std::fabs(g - want[i]) <= rel * std::max(1.0f, std::fabs(want[i]));
    if (!ok && bad++ == 0) first_bad = i;
  }
  INFO("first mismatch at " << first_bad << ": got " << gpu::bf16_to_f32(got[first_bad])
                            << ", want " << want[first_bad]);
  REQUIRE(bad == 0);
}

// want holds bf16 values (copies of inputs): the result must be those bits exactly.
inline void require_same_bf16(const bits& got, const std::vector<float>& want) {
  REQUIRE(got == to_bf16(want));
}

}  // namespace courier::test::kernels
