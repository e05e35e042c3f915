#include "gpu/sim/sim_kernels.hpp"

#include <cmath>
#include <cstddef>

#include "gpu/sim/readable_range.hpp"

namespace courier::gpu::sim {

namespace {

// The inner loops (dot_unchecked, dot4) are not instrumented by AddressSanitizer: they were three
// quarters of the sanitized tests' time, one shadow check per float. Their callers check every
// range they will read or write at once instead (check_range), so an out-of-bounds row is still
// reported, before the loop reads it.
//
// Cloned for AVX2: without FP contraction (-std=c++17) both clones do the same IEEE operations in
// the same order, so the wider one is only faster, never different. (Under ASan they are not
// cloned: clang refuses target_clones with no_sanitize; the one version gives the same bits.)
#ifdef COURIER_ASAN
#define COURIER_SIM_INNER_LOOP COURIER_UNSANITIZED_LOOP
#else
#define COURIER_SIM_INNER_LOOP __attribute__((target_clones("avx2", "default")))
#endif
COURIER_SIM_INNER_LOOP float dot_unchecked(
    const float* a, const float* b, std::int64_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    for (int l = 0; l < 8; ++l) acc[l] += a[k + l] * b[k + l];
  }
  float tail = 0.0f;
  for (; k < n; ++k) tail += a[k] * b[k];
  const float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  return s + tail;
}

// Four outputs of one x row at once: the same per-output order as dot(), with the x loads shared.
COURIER_SIM_INNER_LOOP void dot4(const float* x, const float* w0,
                                                           const float* w1, const float* w2,
                                                           const float* w3, std::int64_t n,
                                                           float* out) {
  float a0[8] = {0, 0, 0, 0, 0, 0, 0, 0}, a1[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  float a2[8] = {0, 0, 0, 0, 0, 0, 0, 0}, a3[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    for (int l = 0; l < 8; ++l) {
      const float xv = x[k + l];
      a0[l] += xv * w0[k + l];
      a1[l] += xv * w1[k + l];
      a2[l] += xv * w2[k + l];
      a3[l] += xv * w3[k + l];
    }
  }
  float t0 = 0, t1 = 0, t2 = 0, t3 = 0;
  for (; k < n; ++k) {
    t0 += x[k] * w0[k];
    t1 += x[k] * w1[k];
    t2 += x[k] * w2[k];
    t3 += x[k] * w3[k];
  }
  auto fold = [](const float* a) {
    return ((a[0] + a[4]) + (a[1] + a[5])) + ((a[2] + a[6]) + (a[3] + a[7]));
  };
  out[0] = fold(a0) + t0;
  out[1] = fold(a1) + t1;
  out[2] = fold(a2) + t2;
  out[3] = fold(a3) + t3;
}

}  // namespace

float dot(const float* a, const float* b, std::int64_t n) {
  const auto bytes = static_cast<std::size_t>(n) * sizeof(float);
  check_range(a, bytes);
  check_range(b, bytes);
  return dot_unchecked(a, b, n);
}

void gemm_rows(const float* x, const float* w, const float* bias, float* out, std::int64_t M,
               std::int64_t K, std::int64_t N, std::int64_t n_begin, std::int64_t n_end) {
  if (n_begin >= n_end || M <= 0) return;
  const auto f = sizeof(float);
  check_range(x, static_cast<std::size_t>(M * K) * f);
  check_range(w + n_begin * K, static_cast<std::size_t>((n_end - n_begin) * K) * f);
  // Blocks of 4 weight rows stay in L1 while every x row passes over them.
  std::int64_t n = n_begin;
  for (; n + 4 <= n_end; n += 4) {
    const float* w0 = w + n * K;
    for (std::int64_t m = 0; m < M; ++m) {
      float r[4];
      dot4(x + m * K, w0, w0 + K, w0 + 2 * K, w0 + 3 * K, K, r);
      float* o = out + m * N + n;
      for (int j = 0; j < 4; ++j) o[j] = bias ? r[j] + bias[n + j] : r[j];
    }
  }
  for (; n < n_end; ++n) {
    for (std::int64_t m = 0; m < M; ++m) {
      const float r = dot_unchecked(x + m * K, w + n * K, K);
      out[m * N + n] = bias ? r + bias[n] : r;
    }
  }
}

void rms_norm_row(const float* x, const float* w, float eps, float* out, std::int64_t n) {
  double ss = 0.0;
  for (std::int64_t i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  const float var = static_cast<float>(ss / static_cast<double>(n));
  const float inv = 1.0f / std::sqrt(var + eps);
  for (std::int64_t i = 0; i < n; ++i) out[i] = w[i] * (x[i] * inv);
}

}  // namespace courier::gpu::sim
