#pragma once
// The f32 arithmetic of the sim backend, one token (or one row) at a time. Each function fixes
// its reduction order, which is what makes results independent of batching.
#include <cstdint>

namespace courier::gpu::sim {

// sum_k a[k] * b[k] in a fixed order: 8 interleaved partial sums, a fixed tree, then the tail.
float dot(const float* a, const float* b, std::int64_t n);

// out[m, n] = dot(x[m, :], w[n, :]) (+ bias[n]) for m in [0, M), n in [n_begin, n_end).
void gemm_rows(const float* x, const float* w, const float* bias, float* out, std::int64_t M,
               std::int64_t K, std::int64_t N, std::int64_t n_begin, std::int64_t n_end);

// out[i] = x[i] / sqrt(mean(x^2) + eps) * w[i] (the mean accumulated in double).
void rms_norm_row(const float* x, const float* w, float eps, float* out, std::int64_t n);

}  // namespace courier::gpu::sim
