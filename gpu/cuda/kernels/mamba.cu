// The Mamba-2 kernels of mamba.hpp.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "gpu/cuda/kernels/launch.cuh"
#include "gpu/cuda/kernels/mamba.hpp"

namespace courier::gpu::cuda {

namespace {

using bf16 = __nv_bfloat16;

__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }

// torch's softplus (threshold 20).
__device__ __forceinline__ float softplus(float x) { return x > 20.0f ? x : log1pf(expf(x)); }

// How many of the (up to `keep`) tokens before t are its sequence's (the span runs
// contiguously, and different sequences have different state rows).
__device__ __forceinline__ std::int32_t span_before(const std::int32_t* __restrict__ token_state,
                                                    std::int32_t t, std::int32_t keep) {
  std::int32_t j = 0;
  while (j < keep && t - j - 1 >= 0 && token_state[t - j - 1] == token_state[t]) ++j;
  return j;
}

// window[k] = the conv input at distance keep - k before token t (k = keep: t's own), channel
// c: from `in` within t's span, from its sequence's conv state before it (zeros when fresh).
__device__ __forceinline__ void conv_window(const bf16* __restrict__ in, std::int64_t ld_in,
                                            std::int64_t C, std::int32_t keep,
                                            const float* __restrict__ states,
                                            const std::int32_t* __restrict__ token_state,
                                            const std::int32_t* __restrict__ positions,
                                            std::int32_t t, std::int64_t c, float* window) {
  const std::int32_t row = token_state[t];
  const std::int32_t j = span_before(token_state, t, keep);
  const bool fresh = positions[t] - j == 0;
  for (std::int32_t k = 0; k <= keep; ++k) {
    const std::int32_t d = keep - k;  // tokens back from t
    if (d <= j) {
      window[k] = __bfloat162float(in[static_cast<std::int64_t>(t - d) * ld_in + c]);
    } else {
      const std::int64_t at = (static_cast<std::int64_t>(row) * C + c) * keep + keep - (d - j);
      window[k] = fresh ? 0.0f : states[at];
    }
  }
}

// Outputs, and the states of tokens with a save row: one thread per (token, channel), tokens
// strided over grid.y. Reads the conv states before the step; writes only save rows.
__global__ void mamba_conv1d_kernel(const bf16* __restrict__ in, std::int64_t ld_in,
                                    std::int64_t C, std::int32_t K, const bf16* __restrict__ w,
                                    const bf16* __restrict__ bias, float* __restrict__ states,
                                    const std::int32_t* __restrict__ token_state,
                                    const std::int32_t* __restrict__ positions,
                                    const std::int32_t* __restrict__ save_row, std::int32_t T,
                                    bf16* __restrict__ out) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= C) return;
  const std::int32_t keep = K - 1;
  float wc[max_conv_kernel];
  for (std::int32_t k = 0; k < K; ++k) wc[k] = __bfloat162float(w[c * K + k]);
  const float b = bias ? __bfloat162float(bias[c]) : 0.0f;
  float window[max_conv_kernel];
  for (std::int32_t t = blockIdx.y; t < T; t += gridDim.y) {
    conv_window(in, ld_in, C, keep, states, token_state, positions, t, c, window);
    float acc = b;
    for (std::int32_t k = 0; k < K; ++k) acc += wc[k] * window[k];
    out[static_cast<std::int64_t>(t) * C + c] = __float2bfloat16(silu(acc));
    if (save_row && save_row[t] >= 0) {
      float* saved = states + (static_cast<std::int64_t>(save_row[t]) * C + c) * keep;
      for (std::int32_t k = 0; k < keep; ++k) saved[k] = window[k + 1];
    }
  }
}

// Each sequence's new conv state, its last K - 1 inputs: one thread per (sequence's last token,
// channel), after every output has read the old states.
__global__ void mamba_conv1d_state_kernel(const bf16* __restrict__ in, std::int64_t ld_in,
                                          std::int64_t C, std::int32_t K,
                                          float* __restrict__ states,
                                          const std::int32_t* __restrict__ token_state,
                                          const std::int32_t* __restrict__ positions,
                                          std::int32_t T) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= C) return;
  const std::int32_t keep = K - 1;
  float window[max_conv_kernel];
  for (std::int32_t t = blockIdx.y; t < T; t += gridDim.y) {
    if (t + 1 < T && token_state[t + 1] == token_state[t]) continue;  // not its span's last
    conv_window(in, ld_in, C, keep, states, token_state, positions, t, c, window);
    float* state = states + (static_cast<std::int64_t>(token_state[t]) * C + c) * keep;
    for (std::int32_t k = 0; k < keep; ++k) state[k] = window[k + 1];
  }
}

constexpr int scan_warps = 4;  // (head, head_dim) pairs per block of the scan
constexpr int scan_per_lane = max_ssm_state / 32;

// The selective scan as its recurrence: one warp per (sequence, head, head_dim element), its row
// of the head's [head_dim, state] SSM state spread over the lanes (state element n in lane
// n % 32), the sequence's tokens in order. Sequences start where token_state changes; grid.y
// strides over tokens, a block working on those that start a sequence.
__global__ void mamba_scan_kernel(const bf16* __restrict__ xbc, std::int64_t ld_xbc,
                                  const bf16* __restrict__ dt_raw, std::int64_t ld_dt,
                                  const bf16* __restrict__ A_log, const bf16* __restrict__ dt_bias,
                                  const bf16* __restrict__ D, mamba_shape s,
                                  float* __restrict__ states,
                                  const std::int32_t* __restrict__ token_state,
                                  const std::int32_t* __restrict__ positions,
                                  const std::int32_t* __restrict__ save_row, std::int32_t T,
                                  bf16* __restrict__ y) {
  const std::int64_t P = s.head_dim, N = s.state_size;
  const std::int64_t inter = static_cast<std::int64_t>(s.num_heads) * P;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * scan_warps + threadIdx.x / 32;
  if (j >= inter) return;
  const std::int64_t h = j / P, p = j % P;
  const std::int64_t g = h / (s.num_heads / s.n_groups);
  const float A = -expf(__bfloat162float(A_log[h]));
  const float bias = __bfloat162float(dt_bias[h]), d = __bfloat162float(D[h]);
  auto state_at = [&](std::int32_t r) {
    return states + ((static_cast<std::int64_t>(r) * s.num_heads + h) * P + p) * N;
  };
  for (std::int32_t t0 = blockIdx.y; t0 < T; t0 += gridDim.y) {
    if (t0 > 0 && token_state[t0 - 1] == token_state[t0]) continue;  // not a sequence's first
    const std::int32_t row = token_state[t0];
    const bool fresh = positions[t0] == 0;
    float S[scan_per_lane];
    const float* in = state_at(row);
#pragma unroll
    for (int i = 0; i < scan_per_lane; ++i) {
      const std::int64_t n = lane + 32 * i;
      S[i] = n < N && !fresh ? in[n] : 0.0f;
    }
    std::int32_t t_end = t0 + 1;  // the span's end first: a loop of known length pipelines
    while (t_end < T && token_state[t_end] == row) ++t_end;
    for (std::int32_t t = t0; t < t_end; ++t) {
      const bf16* r = xbc + static_cast<std::int64_t>(t) * ld_xbc;
      const float x = __bfloat162float(r[h * P + p]);
      const bf16* B = r + inter + g * N;
      const bf16* Cm = r + inter + static_cast<std::int64_t>(s.n_groups) * N + g * N;
      const float raw = __bfloat162float(dt_raw[static_cast<std::int64_t>(t) * ld_dt + h]);
      float dt = softplus(raw + bias);
      if (dt < s.dt_min) dt = s.dt_min;
      const float dA = expf(dt * A), dtx = dt * x;
      float acc = 0.0f;
#pragma unroll
      for (int i = 0; i < scan_per_lane; ++i) {
        const std::int64_t n = lane + 32 * i;
        if (n < N) {
          S[i] = S[i] * dA + dtx * __bfloat162float(B[n]);
          acc += S[i] * __bfloat162float(Cm[n]);
        }
      }
#pragma unroll
      for (int off = 16; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
      if (lane == 0) y[static_cast<std::int64_t>(t) * inter + j] = __float2bfloat16(acc + d * x);
      if (save_row && save_row[t] >= 0) {
        float* saved = state_at(save_row[t]);
#pragma unroll
        for (int i = 0; i < scan_per_lane; ++i) {
          const std::int64_t n = lane + 32 * i;
          if (n < N) saved[n] = S[i];
        }
      }
    }
    float* out = state_at(row);
#pragma unroll
    for (int i = 0; i < scan_per_lane; ++i) {
      const std::int64_t n = lane + 32 * i;
      if (n < N) out[n] = S[i];
    }
  }
}

// One block per (verified row, layer): how many of the row's drafts stand (every thread counts
// the same few), then the state row after the last standing one over the slot, both buffers.
__global__ void select_draft_states_kernel(const std::int32_t* __restrict__ sampled,
                                           const std::int32_t* __restrict__ ids,
                                           const draft_states* __restrict__ rows,
                                           state_buffer conv, state_buffer ssm) {
  const draft_states r = rows[blockIdx.x];
  std::int32_t a = 0;
  while (a < r.num_drafts && sampled[r.first_sample + a] == ids[r.first_draft + a]) ++a;
  if (a == r.num_drafts) return;
  const state_buffer* buffers[2] = {&conv, &ssm};
  for (const state_buffer* b : buffers) {
    if (static_cast<std::int32_t>(blockIdx.y) >= b->layers) continue;
    float* layer = b->base + static_cast<std::int64_t>(blockIdx.y) * b->layer_floats;
    const float* src = layer + static_cast<std::int64_t>(r.save_row + a) * b->row_floats;
    float* dst = layer + static_cast<std::int64_t>(r.slot) * b->row_floats;
    for (std::int64_t i = threadIdx.x; i < b->row_floats; i += blockDim.x) dst[i] = src[i];
  }
}

constexpr unsigned norm_threads = 256;

// The sum of every thread's `v` in a block of norm_threads threads (a fixed order), on every
// thread; `partial` is the block's shared scratch of norm_threads floats.
__device__ float block_sum(float v, float* partial) {
  partial[threadIdx.x] = v;
  __syncthreads();
  for (unsigned half = norm_threads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  return partial[0];
}

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
  const float inv = rsqrtf(block_sum(ss, partial) / static_cast<float>(group) + eps);
  for (std::int64_t i = g0 + threadIdx.x; i < g0 + group; i += norm_threads) {
    const float v = __bfloat162float(y[r * n + i]) * silu(__bfloat162float(gate[r * ld_gate + i]));
    out[r * n + i] = __float2bfloat16(__bfloat162float(w[i]) * (v * inv));
  }
}

// One block per row: the row's sum of squares of g (a fixed order), then the row of sums.
__global__ void gated_square_sums_kernel(const bf16* __restrict__ y,
                                         const bf16* __restrict__ gate, std::int64_t ld_gate,
                                         std::int64_t n, float* __restrict__ sums,
                                         std::int64_t ld_sums, std::int64_t num_sums,
                                         std::int64_t col) {
  __shared__ float partial[norm_threads];
  const std::int64_t r = blockIdx.x;
  float ss = 0.0f;
  for (std::int64_t i = threadIdx.x; i < n; i += norm_threads) {
    const float v = __bfloat162float(y[r * n + i]) * silu(__bfloat162float(gate[r * ld_gate + i]));
    ss += v * v;
  }
  const float total = block_sum(ss, partial);
  for (std::int64_t c = threadIdx.x; c < num_sums; c += norm_threads) {
    sums[r * ld_sums + c] = c == col ? total : 0.0f;
  }
}

__global__ void gated_rms_norm_summed_kernel(const bf16* __restrict__ y,
                                             const bf16* __restrict__ gate, std::int64_t ld_gate,
                                             const bf16* __restrict__ w, std::int64_t n,
                                             const float* __restrict__ sums,
                                             std::int64_t ld_sums, std::int64_t col,
                                             std::int64_t count, float eps,
                                             bf16* __restrict__ out) {
  const std::int64_t r = blockIdx.x;
  const float inv = rsqrtf(sums[r * ld_sums + col] / static_cast<float>(count) + eps);
  for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) {
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
  const dim3 grid(blocks_for(C, 128), static_cast<unsigned>(std::min(batch.num_tokens, 4096)));
  const bf16* src = static_cast<const bf16*>(in) + col_begin;
  detail::launch_kernel(mamba_conv1d_kernel, grid, 128, 0, stream, src, ld_in, C, K,
                        static_cast<const bf16*>(w), static_cast<const bf16*>(bias), states,
                        batch.token_state, batch.positions, batch.save_row, batch.num_tokens,
                        static_cast<bf16*>(out));
  detail::launch_kernel(mamba_conv1d_state_kernel, grid, 128, 0, stream, src, ld_in, C, K, states,
                        batch.token_state, batch.positions, batch.num_tokens);
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
  const dim3 grid(blocks_for(inter, scan_warps),
                  static_cast<unsigned>(std::min(batch.num_tokens, 4096)));
  detail::launch_kernel(
      mamba_scan_kernel, grid, 32 * scan_warps, 0, stream, static_cast<const bf16*>(xbc), ld_xbc,
      static_cast<const bf16*>(proj) + dt_col, ld_proj, static_cast<const bf16*>(A_log),
      static_cast<const bf16*>(dt_bias), static_cast<const bf16*>(D), shape, states,
      batch.token_state, batch.positions, batch.save_row, batch.num_tokens, static_cast<bf16*>(y));
  return cudaGetLastError();
}

cudaError_t launch_select_draft_states(const std::int32_t* sampled, const std::int32_t* ids,
                                       const draft_states* rows, std::int32_t n,
                                       state_buffer conv, state_buffer ssm, cudaStream_t stream) {
  if (n < 0 || conv.layers < 0 || ssm.layers < 0 || conv.layers > 65535 || ssm.layers > 65535) {
    return cudaErrorInvalidValue;
  }
  const std::int32_t layers = conv.layers > ssm.layers ? conv.layers : ssm.layers;
  if (n == 0 || layers == 0) return cudaSuccess;
  if (!sampled || !ids || !rows || (conv.layers > 0 && !conv.base) ||
      (ssm.layers > 0 && !ssm.base)) {
    return cudaErrorInvalidValue;
  }
  const dim3 grid(static_cast<unsigned>(n), static_cast<unsigned>(layers));
  detail::launch_kernel(select_draft_states_kernel, grid, 256, 0, stream, sampled, ids, rows, conv,
                        ssm);
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
  detail::launch_kernel(gated_rms_norm_kernel, grid, norm_threads, 0, stream,
                        static_cast<const bf16*>(y), static_cast<const bf16*>(gate), ld_gate,
                        static_cast<const bf16*>(w), n, group, eps, static_cast<bf16*>(out));
  return cudaGetLastError();
}

cudaError_t launch_gated_square_sums(const void* y, const void* gate, std::int64_t ld_gate,
                                     std::int64_t rows, std::int64_t n, float* sums,
                                     std::int64_t ld_sums, std::int64_t col,
                                     cudaStream_t stream) {
  if (rows < 0 || n < 0 || ld_gate < n || col < 0 || col >= ld_sums) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  if (!y || !gate || !sums) return cudaErrorInvalidValue;
  detail::launch_kernel(gated_square_sums_kernel, static_cast<unsigned>(rows), norm_threads, 0,
                        stream, static_cast<const bf16*>(y), static_cast<const bf16*>(gate),
                        ld_gate, n, sums, ld_sums, ld_sums, col);
  return cudaGetLastError();
}

cudaError_t launch_gated_rms_norm_summed(const void* y, const void* gate, std::int64_t ld_gate,
                                         const void* w, std::int64_t rows, std::int64_t n,
                                         const float* sums, std::int64_t ld_sums,
                                         std::int64_t col, std::int64_t count, float eps,
                                         void* out, cudaStream_t stream) {
  if (rows < 0 || n < 0 || ld_gate < n || col < 0 || col >= ld_sums || count < 1) {
    return cudaErrorInvalidValue;
  }
  if (rows == 0 || n == 0) return cudaSuccess;
  if (!y || !gate || !w || !sums || !out) return cudaErrorInvalidValue;
  detail::launch_kernel(gated_rms_norm_summed_kernel, static_cast<unsigned>(rows), norm_threads, 0,
                        stream, static_cast<const bf16*>(y), static_cast<const bf16*>(gate),
                        ld_gate, static_cast<const bf16*>(w), n, sums, ld_sums, col, count, eps,
                        static_cast<bf16*>(out));
  return cudaGetLastError();
}

cudaError_t launch_relu2(const void* x, void* out, std::int64_t n, cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!x || !out) return cudaErrorInvalidValue;
  const std::int64_t blocks = (n + 255) / 256;
  detail::launch_kernel(relu2_kernel, static_cast<unsigned>(blocks < 4096 ? blocks : 4096), 256, 0,
                        stream, static_cast<const bf16*>(x), static_cast<bf16*>(out), n);
  return cudaGetLastError();
}

}  // namespace courier::gpu::cuda
