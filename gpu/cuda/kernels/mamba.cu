// The Mamba-2 kernels of mamba.hpp.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda/kernels/mamba.hpp"

namespace courier::gpu::cuda {

namespace {

using bf16 = __nv_bfloat16;

__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }

// torch's softplus (threshold 20).
__device__ __forceinline__ float softplus(float x) { return x > 20.0f ? x : log1pf(expf(x)); }

// One thread per channel, the batch's tokens in order.
__global__ void mamba_conv1d_kernel(const bf16* __restrict__ in, std::int64_t ld_in,
                                    std::int64_t C, std::int32_t K, const bf16* __restrict__ w,
                                    const bf16* __restrict__ bias, float* __restrict__ states,
                                    const std::int32_t* __restrict__ token_state,
                                    const std::int32_t* __restrict__ positions,
                                    std::int32_t T, bf16* __restrict__ out) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= C) return;
  const std::int32_t keep = K - 1;
  float wc[max_conv_kernel];
  for (std::int32_t k = 0; k < K; ++k) wc[k] = __bfloat162float(w[c * K + k]);
  const float b = bias ? __bfloat162float(bias[c]) : 0.0f;
  float window[max_conv_kernel];
  std::int32_t row = -1;
  for (std::int32_t t = 0; t < T; ++t) {
    if (token_state[t] != row) {  // a new sequence: save the last one's state, load this one's
      if (row >= 0) {
        for (std::int32_t k = 0; k < keep; ++k) states[(row * C + c) * keep + k] = window[k];
      }
      row = token_state[t];
      const bool fresh = positions[t] == 0;
      for (std::int32_t k = 0; k < keep; ++k) {
        window[k] = fresh ? 0.0f : states[(row * C + c) * keep + k];
      }
    }
    window[keep] = __bfloat162float(in[t * ld_in + c]);
    float acc = b;
    for (std::int32_t k = 0; k < K; ++k) acc += wc[k] * window[k];
    out[t * C + c] = __float2bfloat16(silu(acc));
    for (std::int32_t k = 0; k < keep; ++k) window[k] = window[k + 1];
  }
  if (row >= 0) {
    for (std::int32_t k = 0; k < keep; ++k) states[(row * C + c) * keep + k] = window[k];
  }
}

// One thread per (head, head_dim element): its row of the head's [head_dim, state] SSM state in
// registers, the batch's tokens in order.
__global__ void mamba_scan_kernel(const bf16* __restrict__ xbc, std::int64_t ld_xbc,
                                  const bf16* __restrict__ dt_raw, std::int64_t ld_dt,
                                  const bf16* __restrict__ A_log, const bf16* __restrict__ dt_bias,
                                  const bf16* __restrict__ D, mamba_shape s,
                                  float* __restrict__ states,
                                  const std::int32_t* __restrict__ token_state,
                                  const std::int32_t* __restrict__ positions, std::int32_t T,
                                  bf16* __restrict__ y) {
  const std::int64_t P = s.head_dim, N = s.state_size;
  const std::int64_t inter = static_cast<std::int64_t>(s.num_heads) * P;
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= inter) return;
  const std::int64_t h = j / P, p = j % P;
  const std::int64_t g = h / (s.num_heads / s.n_groups);
  const float A = -expf(__bfloat162float(A_log[h]));
  const float bias = __bfloat162float(dt_bias[h]), d = __bfloat162float(D[h]);
  float S[max_ssm_state];
  std::int32_t row = -1;
  auto state_at = [&](std::int32_t r) { return states + ((r * s.num_heads + h) * P + p) * N; };
  for (std::int32_t t = 0; t < T; ++t) {
    if (token_state[t] != row) {
      if (row >= 0) {
        float* out = state_at(row);
        for (std::int64_t n = 0; n < N; ++n) out[n] = S[n];
      }
      row = token_state[t];
      const bool fresh = positions[t] == 0;
      const float* in = state_at(row);
      for (std::int64_t n = 0; n < N; ++n) S[n] = fresh ? 0.0f : in[n];
    }
    const bf16* r = xbc + t * ld_xbc;
    const float x = __bfloat162float(r[h * P + p]);
    const bf16* B = r + inter + g * N;
    const bf16* Cm = r + inter + static_cast<std::int64_t>(s.n_groups) * N + g * N;
    float dt = softplus(__bfloat162float(dt_raw[t * ld_dt + h]) + bias);
    if (dt < s.dt_min) dt = s.dt_min;
    const float dA = expf(dt * A), dtx = dt * x;
    float acc = 0.0f;
    for (std::int64_t n = 0; n < N; ++n) {
      S[n] = S[n] * dA + dtx * __bfloat162float(B[n]);
      acc += S[n] * __bfloat162float(Cm[n]);
    }
    y[t * inter + j] = __float2bfloat16(acc + d * x);
  }
  if (row >= 0) {
    float* out = state_at(row);
    for (std::int64_t n = 0; n < N; ++n) out[n] = S[n];
  }
}

constexpr unsigned norm_threads = 256;

// One block per (row, group): the group's sum of squares in a fixed order, then the outputs.
__global__ void gated_rms_norm_kernel(const bf16* __restrict__ y, const bf16* __restrict__ gate,
                                      std::int64_t ld_gate, const bf16* __restrict__ w,
                                      std::int64_t n, std::int64_t group, float eps,
                                      bf16* __restrict__ out) {
  __shared__ float partial[norm_threads];
  const std::int64_t r = blockIdx.x, g0 = static_cast<std::int64_t>(blockIdx.y) * group;
  float ss = 0.0f;
  for (std::int64_t i = g0 + threadIdx.x; i < g0 + group; i += norm_threads) {
    const float v = __bfloat162float(y[r * n + i]) * silu(__bfloat162float(gate[r * ld_gate + i]));
    ss += v * v;
  }
  partial[threadIdx.x] = ss;
  __syncthreads();
  for (unsigned half = norm_threads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  const float inv = rsqrtf(partial[0] / static_cast<float>(group) + eps);
  for (std::int64_t i = g0 + threadIdx.x; i < g0 + group; i += norm_threads) {
    const float v = __bfloat162float(y[r * n + i]) * silu(__bfloat162float(gate[r * ld_gate + i]));
    out[r * n + i] = __float2bfloat16(__bfloat162float(w[i]) * (v * inv));
  }
}

__global__ void relu2_kernel(const bf16* __restrict__ x, bf16* __restrict__ out, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const float v = fmaxf(__bfloat162float(x[i]), 0.0f);
    out[i] = __float2bfloat16(v * v);
  }
}

unsigned blocks_for(std::int64_t n, unsigned threads) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}

}  // namespace

cudaError_t launch_mamba_conv1d(const void* in, std::int64_t ld_in, std::int64_t col_begin,
                                std::int64_t C, std::int32_t K, const void* w, const void* bias,
                                float* states, const mamba_batch& batch, void* out,
                                cudaStream_t stream) {
  if (C < 0 || K < 2 || K > max_conv_kernel || col_begin < 0 || ld_in < col_begin + C ||
      batch.num_tokens < 0) {
    return cudaErrorInvalidValue;
  }
  if (C == 0 || batch.num_tokens == 0) return cudaSuccess;
  if (!in || !w || !states || !out || !batch.token_state || !batch.positions) {
    return cudaErrorInvalidValue;
  }
  mamba_conv1d_kernel<<<blocks_for(C, 128), 128, 0, stream>>>(
      static_cast<const bf16*>(in) + col_begin, ld_in, C, K, static_cast<const bf16*>(w),
      static_cast<const bf16*>(bias), states, batch.token_state, batch.positions,
      batch.num_tokens, static_cast<bf16*>(out));
  return cudaGetLastError();
}

cudaError_t launch_mamba_scan(const void* xbc, std::int64_t ld_xbc, const void* proj,
                              std::int64_t ld_proj, std::int64_t dt_col, const void* A_log,
                              const void* dt_bias, const void* D, const mamba_shape& shape,
                              float* states, const mamba_batch& batch, void* y,
                              cudaStream_t stream) {
  const std::int64_t inter = static_cast<std::int64_t>(shape.num_heads) * shape.head_dim;
  if (shape.num_heads < 1 || shape.head_dim < 1 || shape.state_size < 1 ||
      shape.state_size > max_ssm_state || shape.n_groups < 1 ||
      shape.num_heads % shape.n_groups != 0 ||
      ld_xbc < inter + 2 * static_cast<std::int64_t>(shape.n_groups) * shape.state_size ||
      dt_col < 0 || ld_proj < dt_col + shape.num_heads || batch.num_tokens < 0) {
    return cudaErrorInvalidValue;
  }
  if (batch.num_tokens == 0) return cudaSuccess;
  if (!xbc || !proj || !A_log || !dt_bias || !D || !states || !y || !batch.token_state ||
      !batch.positions) {
    return cudaErrorInvalidValue;
  }
  mamba_scan_kernel<<<blocks_for(inter, 64), 64, 0, stream>>>(
      static_cast<const bf16*>(xbc), ld_xbc, static_cast<const bf16*>(proj) + dt_col, ld_proj,
      static_cast<const bf16*>(A_log), static_cast<const bf16*>(dt_bias),
      static_cast<const bf16*>(D), shape, states, batch.token_state, batch.positions,
      batch.num_tokens, static_cast<bf16*>(y));
  return cudaGetLastError();
}

cudaError_t launch_gated_rms_norm(const void* y, const void* gate, std::int64_t ld_gate,
                                  const void* w, std::int64_t rows, std::int64_t n,
                                  std::int64_t group, float eps, void* out, cudaStream_t stream) {
  if (rows < 0 || n < 0 || group < 1 || n % group != 0 || ld_gate < n || n / group > 65535) {
    return cudaErrorInvalidValue;
  }
  if (rows == 0 || n == 0) return cudaSuccess;
  if (!y || !gate || !w || !out) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(rows), static_cast<unsigned>(n / group));
  gated_rms_norm_kernel<<<grid, norm_threads, 0, stream>>>(
      static_cast<const bf16*>(y), static_cast<const bf16*>(gate), ld_gate,
      static_cast<const bf16*>(w), n, group, eps, static_cast<bf16*>(out));
  return cudaGetLastError();
}

cudaError_t launch_relu2(const void* x, void* out, std::int64_t n, cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!x || !out) return cudaErrorInvalidValue;
  const std::int64_t blocks = (n + 255) / 256;
  relu2_kernel<<<static_cast<unsigned>(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>(
      static_cast<const bf16*>(x), static_cast<bf16*>(out), n);
  return cudaGetLastError();
}

}  // namespace courier::gpu::cuda
