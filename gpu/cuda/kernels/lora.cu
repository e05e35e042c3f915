// The LoRA kernels of lora.hpp: shrink (u = A_s x, f32) and expand (out += B_s u).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "gpu/cuda/kernels/launch.cuh"
#include "gpu/cuda/kernels/lora.hpp"

namespace courier::gpu::cuda {

namespace {

using bf16 = __nv_bfloat16;

constexpr int chunk = 8;  // elements per 16-byte load of bf16
constexpr int shrink_warps = 4;
constexpr int shrink_threads = 32 * shrink_warps;
constexpr int shrink_rows = 4;  // rows of a (elements of u) per block
constexpr int expand_threads = 128;
constexpr std::int64_t max_grid_y = 65535;

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

// v[e] = p[e] for e < n (n == chunk with Vec: one 16-byte load, p 16-byte aligned).
template <bool Vec>
__device__ __forceinline__ void load_chunk(const bf16* __restrict__ p, int n, float (&v)[chunk]) {
  if constexpr (Vec) {
    const uint4 raw = *reinterpret_cast<const uint4*>(p);
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
    for (int e = 0; e < chunk / 2; ++e) {
      const float2 f = __bfloat1622float2(h[e]);
      v[2 * e] = f.x;
      v[2 * e + 1] = f.y;
    }
  } else {
#pragma unroll
    for (int e = 0; e < chunk; ++e) v[e] = e < n ? __bfloat162float(p[e]) : 0.0f;
  }
}

// One block per (group of shrink_rows rows of u, token), tokens strided over grid.y; tokens
// skipped (slot < 0 or >= num_slots) leave their tmp row alone. Thread i sums the chunks i,
// i + 128, ... of K for each of the block's rows (x's chunk loaded once for all of them), then
// each warp reduces its lanes (butterfly) and thread g adds the 4 warps' sums of row g in order:
// the order depends on K alone, never on T, the slots or the load width.
template <bool Vec>
__global__ void __launch_bounds__(shrink_threads)
    lora_shrink_kernel(const bf16* __restrict__ x, std::int64_t K, const bf16* __restrict__ a,
                       const std::int32_t* __restrict__ slots, std::int32_t num_slots,
                       std::int64_t rows, std::int64_t T, float* __restrict__ tmp,
                       std::int64_t ld_tmp) {
  __shared__ float partial[shrink_warps][shrink_rows];
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * shrink_rows;
  const std::int64_t num_chunks = (K + chunk - 1) / chunk;
  for (std::int64_t t = blockIdx.y; t < T; t += gridDim.y) {
    const std::int32_t s = slots[t];
    if (s < 0 || s >= num_slots) continue;  // the same for the whole block
    const bf16* xt = x + t * K;
    const bf16* ar[shrink_rows];
#pragma unroll
    for (int g = 0; g < shrink_rows; ++g) {
      // A row past the last (the last group's rest) reads the last row; its sum is dropped.
      const std::int64_t r = row0 + g < rows ? row0 + g : rows - 1;
      ar[g] = a + (static_cast<std::int64_t>(s) * rows + r) * K;
    }
    float acc[shrink_rows] = {};
    for (std::int64_t c = threadIdx.x; c < num_chunks; c += shrink_threads) {
      const std::int64_t k0 = c * chunk;
      const int n = Vec || K - k0 >= chunk ? chunk : static_cast<int>(K - k0);
      float xv[chunk];
      load_chunk<Vec>(xt + k0, n, xv);
#pragma unroll
      for (int g = 0; g < shrink_rows; ++g) {
        float av[chunk];
        load_chunk<Vec>(ar[g] + k0, n, av);
#pragma unroll
        for (int e = 0; e < chunk; ++e) {
          if (e < n) acc[g] += av[e] * xv[e];
        }
      }
    }
#pragma unroll
    for (int g = 0; g < shrink_rows; ++g) {
#pragma unroll
      for (int off = 16; off > 0; off /= 2) acc[g] += __shfl_xor_sync(0xffffffffu, acc[g], off);
    }
    if (lane == 0) {
#pragma unroll
      for (int g = 0; g < shrink_rows; ++g) partial[warp][g] = acc[g];
    }
    __syncthreads();
    if (threadIdx.x < shrink_rows && row0 + threadIdx.x < rows) {
      float sum = partial[0][threadIdx.x];
#pragma unroll
      for (int w = 1; w < shrink_warps; ++w) sum += partial[w][threadIdx.x];
      tmp[t * ld_tmp + row0 + threadIdx.x] = sum;
    }
    __syncthreads();  // partial is read before the next token overwrites it
  }
}

struct part_ends {
  std::int64_t end[3];
};

// One thread per output column c, blocks of expand_threads columns, tokens strided over grid.y:
// c's part p, then sum_j b[s * N + c, j] * u[t, p * rank + j] for j in order (Vec: 8 at a time
// from one 16-byte load, the same order), added to out in f32 and rounded once to bf16.
template <bool Vec>
__global__ void __launch_bounds__(expand_threads)
    lora_expand_kernel(const float* __restrict__ tmp, std::int64_t ld_tmp,
                       const bf16* __restrict__ b, const std::int32_t* __restrict__ slots,
                       std::int32_t num_slots, std::int32_t parts, std::int32_t rank, part_ends pe,
                       std::int64_t N, std::int64_t T, bf16* __restrict__ out) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * expand_threads + threadIdx.x;
  if (c >= N) return;
  // The first part that ends after c (the last one if none does): constant indices into pe,
  // which then stays in registers.
  std::int32_t p = parts - 1;
#pragma unroll
  for (int q = 1; q >= 0; --q) {
    if (q < parts - 1 && c < pe.end[q]) p = q;
  }
  for (std::int64_t t = blockIdx.y; t < T; t += gridDim.y) {
    const std::int32_t s = slots[t];
    if (s < 0 || s >= num_slots) continue;
    const bf16* br = b + (static_cast<std::int64_t>(s) * N + c) * rank;
    const float* u = tmp + t * ld_tmp + static_cast<std::int64_t>(p) * rank;
    float acc = 0.0f;
    for (std::int32_t j0 = 0; j0 < rank; j0 += chunk) {
      const int n = Vec || rank - j0 >= chunk ? chunk : static_cast<int>(rank - j0);
      float bv[chunk];
      load_chunk<Vec>(br + j0, n, bv);
#pragma unroll
      for (int e = 0; e < chunk; ++e) {
        if (e < n) acc += bv[e] * u[j0 + e];
      }
    }
    bf16* o = out + t * N + c;
    *o = __float2bfloat16(__bfloat162float(*o) + acc);
  }
}

unsigned blocks_for(std::int64_t n, std::int64_t per_block) {
  return static_cast<unsigned>((n + per_block - 1) / per_block);
}

bool shape_ok(std::int64_t num_tokens, std::int32_t num_slots, std::int32_t parts,
              std::int32_t rank, std::int64_t ld_tmp) {
  const std::int64_t rows = static_cast<std::int64_t>(parts) * rank;
  return num_tokens >= 0 && num_slots >= 1 && parts >= 1 && parts <= 3 && rank >= 1 &&
         ld_tmp >= rows;
}

}  // namespace

cudaError_t launch_lora_shrink(const void* x, std::int64_t num_tokens, std::int64_t K,
                               const void* a, const std::int32_t* slots, std::int32_t num_slots,
                               std::int32_t parts, std::int32_t rank, float* tmp,
                               std::int64_t ld_tmp, cudaStream_t stream) {
  const std::int64_t rows = static_cast<std::int64_t>(parts) * rank;
  if (!shape_ok(num_tokens, num_slots, parts, rank, ld_tmp) || K < 0 ||
      (rows + shrink_rows - 1) / shrink_rows > 0x7fffffff) {
    return cudaErrorInvalidValue;
  }
  if (num_tokens == 0) return cudaSuccess;
  if (!slots || !tmp || (K > 0 && (!x || !a))) return cudaErrorInvalidValue;
  const dim3 grid(blocks_for(rows, shrink_rows),
                  static_cast<unsigned>(std::min(num_tokens, max_grid_y)));
  const bf16* xb = static_cast<const bf16*>(x);
  const bf16* ab = static_cast<const bf16*>(a);
  if (K % chunk == 0 && aligned16(x) && aligned16(a)) {
    detail::launch_kernel(lora_shrink_kernel<true>, grid, shrink_threads, 0, stream, xb, K, ab,
                          slots, num_slots, rows, num_tokens, tmp, ld_tmp);
  } else {
    detail::launch_kernel(lora_shrink_kernel<false>, grid, shrink_threads, 0, stream, xb, K, ab,
                          slots, num_slots, rows, num_tokens, tmp, ld_tmp);
  }
  return cudaGetLastError();
}

cudaError_t launch_lora_expand(const float* tmp, std::int64_t ld_tmp, std::int64_t num_tokens,
                               const void* b, const std::int32_t* slots, std::int32_t num_slots,
                               std::int32_t parts, std::int32_t rank, const std::int64_t* part_end,
                               std::int64_t N, void* out, cudaStream_t stream) {
  if (!shape_ok(num_tokens, num_slots, parts, rank, ld_tmp) || !part_end || N < 0 ||
      part_end[parts - 1] != N || (N + expand_threads - 1) / expand_threads > 0x7fffffff) {
    return cudaErrorInvalidValue;
  }
  if (num_tokens == 0 || N == 0) return cudaSuccess;
  if (!tmp || !b || !slots || !out) return cudaErrorInvalidValue;
  part_ends pe{{0, 0, 0}};
  for (std::int32_t p = 0; p < parts; ++p) pe.end[p] = part_end[p];
  const dim3 grid(blocks_for(N, expand_threads),
                  static_cast<unsigned>(std::min(num_tokens, max_grid_y)));
  const bf16* bb = static_cast<const bf16*>(b);
  bf16* ob = static_cast<bf16*>(out);
  if (rank % chunk == 0 && aligned16(b)) {
    detail::launch_kernel(lora_expand_kernel<true>, grid, expand_threads, 0, stream, tmp, ld_tmp,
                          bb, slots, num_slots, parts, rank, pe, N, num_tokens, ob);
  } else {
    detail::launch_kernel(lora_expand_kernel<false>, grid, expand_threads, 0, stream, tmp, ld_tmp,
                          bb, slots, num_slots, parts, rank, pe, N, num_tokens, ob);
  }
  return cudaGetLastError();
}

}  // namespace courier::gpu::cuda
