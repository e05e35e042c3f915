// The element-wise and small kernels; the contracts are in elementwise.hpp.
//
// Every kernel picks a vector width at launch: 16-byte accesses when the row length and every
// pointer allow it, then 4 bytes, then single elements, so any shape is handled. The width is a
// function of the row length and the pointers only, and so is every block shape and reduction
// order: a row's result never depends on how many rows are in the batch.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "gpu/cuda/kernels/elementwise.hpp"

namespace courier::gpu::cuda {

namespace {

using bf16 = __nv_bfloat16;

constexpr int kMaxRopeHalf = 256;       // head_dim <= 512
constexpr unsigned kFlatThreads = 256;  // grid-stride kernels
constexpr std::int64_t kMaxFlatBlocks = 4096;
constexpr std::int64_t kMaxGridY = 65535;

// ---- host-side helpers ----

bool aligned(const void* p, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

// The widest of 8, 2, 1 bf16 elements that divides n and keeps every pointer aligned.
template <class... P>
int bf16_vec_width(std::int64_t n, P... ptrs) {
  if (n % 8 == 0 && (aligned(ptrs, 16) && ...)) return 8;
  if (n % 2 == 0 && (aligned(ptrs, 4) && ...)) return 2;
  return 1;
}

// The widest word (16, 4 or 2 bytes) that divides a row of row_bytes and keeps pointers aligned.
template <class... P>
int copy_word_bytes(std::int64_t row_bytes, P... ptrs) {
  if (row_bytes % 16 == 0 && (aligned(ptrs, 16) && ...)) return 16;
  if (row_bytes % 4 == 0 && (aligned(ptrs, 4) && ...)) return 4;
  return 2;
}

// Threads for one block per row of n work items: a multiple of 32 in [32, max_threads].
unsigned row_threads(std::int64_t n, unsigned max_threads) {
  const std::int64_t t = (n + 31) / 32 * 32;
  return static_cast<unsigned>(t < 32 ? 32 : (t > max_threads ? max_threads : t));
}

unsigned flat_blocks(std::int64_t n) {
  const std::int64_t b = (n + kFlatThreads - 1) / kFlatThreads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > kMaxFlatBlocks ? kMaxFlatBlocks : b));
}

constexpr std::int64_t kMaxGridX = 0x7fffffff;

// ---- device-side helpers ----

// VEC consecutive bf16 to f32 and back; p is aligned to VEC * 2 bytes.
template <int VEC>
__device__ __forceinline__ void load_bf16(const bf16* p, float (&f)[VEC]) {
  if constexpr (VEC == 8) {
    const uint4 u = *reinterpret_cast<const uint4*>(p);
    const auto* h = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 v = __bfloat1622float2(h[k]);
      f[2 * k] = v.x;
      f[2 * k + 1] = v.y;
    }
  } else if constexpr (VEC == 2) {
    const float2 v = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(p));
    f[0] = v.x;
    f[1] = v.y;
  } else {
    static_assert(VEC == 1, "vector width is 8, 2 or 1");
    f[0] = __bfloat162float(*p);
  }
}

template <int VEC>
__device__ __forceinline__ void store_bf16(bf16* p, const float (&f)[VEC]) {
  if constexpr (VEC == 8) {
    uint4 u;
    auto* h = reinterpret_cast<__nv_bfloat162*>(&u);
#pragma unroll
    for (int k = 0; k < 4; ++k) h[k] = __floats2bfloat162_rn(f[2 * k], f[2 * k + 1]);
    *reinterpret_cast<uint4*>(p) = u;
  } else if constexpr (VEC == 2) {
    *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(f[0], f[1]);
  } else {
    static_assert(VEC == 1, "vector width is 8, 2 or 1");
    *p = __float2bfloat16_rn(f[0]);
  }
}

__device__ __forceinline__ float round_bf16(float x) {
  return __bfloat162float(__float2bfloat16_rn(x));
}

// Butterfly sum: every lane ends with the same bits (each step adds the same two values).
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The block's sum, in every thread. blockDim.x is a multiple of 32; call once per kernel.
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float partial[32];
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  v = warp_sum(v);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  return warp_sum(lane < (blockDim.x >> 5) ? partial[lane] : 0.0f);
}

// As gpu::f32_to_bf16 on the host, NaN payload included.
__device__ __forceinline__ std::uint16_t f32_to_bf16_bits(float f) {
  std::uint32_t b = __float_as_uint(f);
  if ((b & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((b >> 16) | 0x40u);
  b += 0x7fffu + ((b >> 16) & 1u);
  return static_cast<std::uint16_t>(b >> 16);
}

// ---- kernels ----

// One block per row; two passes over the row (the second mostly from L1).
// x, out [rows, cols]; w [cols]; out may alias x.
template <int VEC>
__global__ void rms_norm_kernel(const bf16* x, const bf16* __restrict__ w, float eps, bf16* out,
                                std::int64_t cols) {
  const bf16* xr = x + static_cast<std::int64_t>(blockIdx.x) * cols;
  bf16* outr = out + static_cast<std::int64_t>(blockIdx.x) * cols;
  const std::int64_t num_vec = cols / VEC;
  float ss = 0.0f;
  for (std::int64_t j = threadIdx.x; j < num_vec; j += blockDim.x) {
    float f[VEC];
    load_bf16<VEC>(xr + j * VEC, f);
#pragma unroll
    for (int k = 0; k < VEC; ++k) ss += f[k] * f[k];
  }
  const float var = block_sum(ss) / static_cast<float>(cols);
  const float inv = 1.0f / sqrtf(var + eps);
  for (std::int64_t j = threadIdx.x; j < num_vec; j += blockDim.x) {
    float f[VEC], g[VEC];
    load_bf16<VEC>(xr + j * VEC, f);
    load_bf16<VEC>(w + j * VEC, g);
#pragma unroll
    for (int k = 0; k < VEC; ++k) f[k] = g[k] * (f[k] * inv);
    store_bf16<VEC>(outr + j * VEC, f);
  }
}

// residual += x (rounded to bf16 and stored), then out = rms_norm(stored residual). Each thread
// re-reads in the second pass only what it wrote in the first. out may alias x or residual.
template <int VEC>
__global__ void add_rms_norm_kernel(bf16* residual, const bf16* x, const bf16* __restrict__ w,
                                    float eps, bf16* out, std::int64_t cols) {
  const std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * cols;
  bf16* rr = residual + base;
  const bf16* xr = x + base;
  bf16* outr = out + base;
  const std::int64_t num_vec = cols / VEC;
  float ss = 0.0f;
  for (std::int64_t j = threadIdx.x; j < num_vec; j += blockDim.x) {
    float r[VEC], f[VEC];
    load_bf16<VEC>(rr + j * VEC, r);
    load_bf16<VEC>(xr + j * VEC, f);
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
      r[k] = round_bf16(r[k] + f[k]);
      ss += r[k] * r[k];
    }
    store_bf16<VEC>(rr + j * VEC, r);
  }
  const float var = block_sum(ss) / static_cast<float>(cols);
  const float inv = 1.0f / sqrtf(var + eps);
  for (std::int64_t j = threadIdx.x; j < num_vec; j += blockDim.x) {
    float r[VEC], g[VEC];
    load_bf16<VEC>(rr + j * VEC, r);
    load_bf16<VEC>(w + j * VEC, g);
#pragma unroll
    for (int k = 0; k < VEC; ++k) r[k] = g[k] * (r[k] * inv);
    store_bf16<VEC>(outr + j * VEC, r);
  }
}

// One warp per head slice of head_dim; x [num_slices, head_dim] in place; w [head_dim].
template <int VEC>
__global__ void head_rms_norm_kernel(bf16* x, const bf16* __restrict__ w, float eps,
                                     std::int64_t num_slices, int head_dim) {
  const std::int64_t slice =
      static_cast<std::int64_t>(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (slice >= num_slices) return;  // the whole warp leaves together
  const int lane = static_cast<int>(threadIdx.x & 31u);
  bf16* p = x + slice * head_dim;
  const int num_vec = head_dim / VEC;
  float ss = 0.0f;
  for (int j = lane; j < num_vec; j += 32) {
    float f[VEC];
    load_bf16<VEC>(p + j * VEC, f);
#pragma unroll
    for (int k = 0; k < VEC; ++k) ss += f[k] * f[k];
  }
  const float var = warp_sum(ss) / static_cast<float>(head_dim);
  const float inv = 1.0f / sqrtf(var + eps);
  for (int j = lane; j < num_vec; j += 32) {
    float f[VEC], g[VEC];
    load_bf16<VEC>(p + j * VEC, f);
    load_bf16<VEC>(w + j * VEC, g);
#pragma unroll
    for (int k = 0; k < VEC; ++k) f[k] = g[k] * (f[k] * inv);
    store_bf16<VEC>(p + j * VEC, f);
  }
}

// One block per token: its cos/sin table in shared memory, then every (head, VEC pairs) of q and k.
// The _rn intrinsics keep the products and sums separate roundings, as in the sim (no FMA).
template <int VEC>
__global__ void rope_kernel(bf16* q, bf16* k, const std::int32_t* __restrict__ positions,
                            const float* __restrict__ inv_freq, int num_q_heads, int num_kv_heads,
                            int head_dim) {
  __shared__ float cos_s[kMaxRopeHalf];
  __shared__ float sin_s[kMaxRopeHalf];
  const std::int64_t t = blockIdx.x;
  const int half = head_dim / 2;
  const float pos = static_cast<float>(positions[t]);
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    const double angle = static_cast<double>(__fmul_rn(pos, inv_freq[i]));
    double s, c;
    sincos(angle, &s, &c);
    cos_s[i] = static_cast<float>(c);
    sin_s[i] = static_cast<float>(s);
  }
  __syncthreads();
  const int per_head = half / VEC;
  const int total = (num_q_heads + num_kv_heads) * per_head;
  for (int j = threadIdx.x; j < total; j += blockDim.x) {
    const int head = j / per_head;
    const int i0 = (j - head * per_head) * VEC;
    bf16* p = head < num_q_heads ? q + (t * num_q_heads + head) * head_dim
                                 : k + (t * num_kv_heads + (head - num_q_heads)) * head_dim;
    float a[VEC], b[VEC];
    load_bf16<VEC>(p + i0, a);
    load_bf16<VEC>(p + half + i0, b);
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      const float c = cos_s[i0 + e], s = sin_s[i0 + e];
      const float x1 = a[e], x2 = b[e];
      a[e] = __fsub_rn(__fmul_rn(x1, c), __fmul_rn(x2, s));
      b[e] = __fadd_rn(__fmul_rn(x2, c), __fmul_rn(x1, s));
    }
    store_bf16<VEC>(p + i0, a);
    store_bf16<VEC>(p + half + i0, b);
  }
}

// out[i, :] = x[rows[i], :] in words of W; grid (num_rows, chunks of the row).
template <class W>
__global__ void gather_rows_kernel(const W* __restrict__ x, std::int64_t num_x_rows,
                                   const std::int32_t* __restrict__ rows, W* __restrict__ out,
                                   std::int64_t words_per_row) {
  const std::int64_t i = blockIdx.x;
  const std::int64_t r = rows[i];
  W* dst = out + i * words_per_row;
  const bool valid = r >= 0 && r < num_x_rows;
  const W* src = x + (valid ? r : 0) * words_per_row;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.y) * blockDim.x;
  for (std::int64_t j = static_cast<std::int64_t>(blockIdx.y) * blockDim.x + threadIdx.x;
       j < words_per_row; j += stride) {
    dst[j] = valid ? src[j] : W{};
  }
}

// cache[slots[t], :] = src[t, :] in words of W; grid (T, chunks of the row, 2: k then v).
template <class W>
__global__ void kv_write_kernel(const W* __restrict__ k, const W* __restrict__ v,
                                const std::int32_t* __restrict__ slots, W* __restrict__ k_cache,
                                W* __restrict__ v_cache, std::int64_t num_slots,
                                std::int64_t words_per_row) {
  const std::int64_t t = blockIdx.x;
  const std::int64_t slot = slots[t];
  if (slot < 0 || slot >= num_slots) return;
  const W* src = (blockIdx.z == 0 ? k : v) + t * words_per_row;
  W* dst = (blockIdx.z == 0 ? k_cache : v_cache) + slot * words_per_row;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.y) * blockDim.x;
  for (std::int64_t j = static_cast<std::int64_t>(blockIdx.y) * blockDim.x + threadIdx.x;
       j < words_per_row; j += stride) {
    dst[j] = src[j];
  }
}

// Grid-stride over n / VEC vectors, then the n % VEC tail element by element.
template <int VEC>
__global__ void silu_mul_kernel(const bf16* __restrict__ gate, const bf16* __restrict__ up,
                                bf16* __restrict__ out, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t num_vec = n / VEC;
  for (std::int64_t j = first; j < num_vec; j += stride) {
    float g[VEC], u[VEC];
    load_bf16<VEC>(gate + j * VEC, g);
    load_bf16<VEC>(up + j * VEC, u);
#pragma unroll
    for (int e = 0; e < VEC; ++e) g[e] = g[e] / (1.0f + expf(-g[e])) * u[e];
    store_bf16<VEC>(out + j * VEC, g);
  }
  for (std::int64_t j = num_vec * VEC + first; j < n; j += stride) {
    const float g = __bfloat162float(gate[j]);
    out[j] = __float2bfloat16_rn(g / (1.0f + expf(-g)) * __bfloat162float(up[j]));
  }
}

// VEC of 4 (16-byte loads, 8-byte stores) or 1.
template <int VEC>
__global__ void f32_to_bf16_kernel(const float* __restrict__ in, std::uint16_t* __restrict__ out,
                                   std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t num_vec = n / VEC;
  if constexpr (VEC == 4) {
    for (std::int64_t j = first; j < num_vec; j += stride) {
      const float4 f = reinterpret_cast<const float4*>(in)[j];
      ushort4 h;
      h.x = f32_to_bf16_bits(f.x);
      h.y = f32_to_bf16_bits(f.y);
      h.z = f32_to_bf16_bits(f.z);
      h.w = f32_to_bf16_bits(f.w);
      reinterpret_cast<ushort4*>(out)[j] = h;
    }
  }
  for (std::int64_t j = num_vec * VEC + first; j < n; j += stride) out[j] = f32_to_bf16_bits(in[j]);
}

template <int VEC>
__global__ void bf16_to_f32_kernel(const std::uint16_t* __restrict__ in, float* __restrict__ out,
                                   std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t num_vec = n / VEC;
  if constexpr (VEC == 4) {
    for (std::int64_t j = first; j < num_vec; j += stride) {
      const ushort4 h = reinterpret_cast<const ushort4*>(in)[j];
      float4 f;
      f.x = __uint_as_float(static_cast<std::uint32_t>(h.x) << 16);
      f.y = __uint_as_float(static_cast<std::uint32_t>(h.y) << 16);
      f.z = __uint_as_float(static_cast<std::uint32_t>(h.z) << 16);
      f.w = __uint_as_float(static_cast<std::uint32_t>(h.w) << 16);
      reinterpret_cast<float4*>(out)[j] = f;
    }
  }
  for (std::int64_t j = num_vec * VEC + first; j < n; j += stride) {
    out[j] = __uint_as_float(static_cast<std::uint32_t>(in[j]) << 16);
  }
}

// ---- launch helpers ----

// Launches the copy kernel K<W> for the word size chosen: grid (rows, chunks, z).
template <class W, class Launch>
cudaError_t launch_words(std::int64_t row_bytes, std::int64_t rows, unsigned z, Launch&& launch) {
  const std::int64_t words = row_bytes / static_cast<std::int64_t>(sizeof(W));
  const unsigned threads = row_threads(words, 256);
  std::int64_t chunks = (words + threads - 1) / threads;
  if (chunks > kMaxGridY) chunks = kMaxGridY;
  launch(static_cast<W*>(nullptr),
         dim3(static_cast<unsigned>(rows), static_cast<unsigned>(chunks), z), dim3(threads), words);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_embedding(const std::int32_t* ids, std::int64_t num_tokens, const void* table,
                             std::int64_t vocab_size, std::int64_t hidden, void* out,
                             cudaStream_t stream) {
  return launch_gather_rows(table, vocab_size, hidden, sizeof(bf16), ids, num_tokens, out, stream);
}

cudaError_t launch_gather_rows(const void* x, std::int64_t num_x_rows, std::int64_t cols,
                               std::size_t elem_size_bytes, const std::int32_t* rows,
                               std::int64_t num_rows, void* out, cudaStream_t stream) {
  if (num_rows < 0 || cols < 0 || num_x_rows < 0 || num_rows > kMaxGridX) {
    return cudaErrorInvalidValue;
  }
  if (elem_size_bytes != 2 && elem_size_bytes != 4) return cudaErrorInvalidValue;
  if (num_rows == 0 || cols == 0) return cudaSuccess;
  if (!x || !rows || !out) return cudaErrorInvalidValue;
  const std::int64_t row_bytes = cols * static_cast<std::int64_t>(elem_size_bytes);
  auto go = [&](auto* word, dim3 grid, dim3 block, std::int64_t words) {
    using W = std::remove_pointer_t<decltype(word)>;
    gather_rows_kernel<W><<<grid, block, 0, stream>>>(static_cast<const W*>(x), num_x_rows, rows,
                                                      static_cast<W*>(out), words);
  };
  switch (copy_word_bytes(row_bytes, x, out)) {
    case 16:
      return launch_words<uint4>(row_bytes, num_rows, 1, go);
    case 4:
      return launch_words<std::uint32_t>(row_bytes, num_rows, 1, go);
    default:
      return launch_words<std::uint16_t>(row_bytes, num_rows, 1, go);
  }
}

cudaError_t launch_kv_write(const void* k, const void* v, const std::int32_t* slot_mapping,
                            std::int64_t num_tokens, const kv_cache_view& cache,
                            cudaStream_t stream) {
  if (cache.type != dtype::bf16 || num_tokens < 0 || num_tokens > kMaxGridX ||
      cache.num_blocks < 0 || cache.block_size < 0 || cache.num_kv_heads < 0 ||
      cache.head_dim < 0) {
    return cudaErrorInvalidValue;
  }
  const std::int64_t width = static_cast<std::int64_t>(cache.num_kv_heads) * cache.head_dim;
  const std::int64_t num_slots = static_cast<std::int64_t>(cache.num_blocks) * cache.block_size;
  if (num_tokens == 0 || width == 0) return cudaSuccess;
  if (!k || !v || !slot_mapping || !cache.k || !cache.v) return cudaErrorInvalidValue;
  const std::int64_t row_bytes = width * static_cast<std::int64_t>(sizeof(bf16));
  auto go = [&](auto* word, dim3 grid, dim3 block, std::int64_t words) {
    using W = std::remove_pointer_t<decltype(word)>;
    kv_write_kernel<W><<<grid, block, 0, stream>>>(
        static_cast<const W*>(k), static_cast<const W*>(v), slot_mapping, static_cast<W*>(cache.k),
        static_cast<W*>(cache.v), num_slots, words);
  };
  switch (copy_word_bytes(row_bytes, k, v, cache.k, cache.v)) {
    case 16:
      return launch_words<uint4>(row_bytes, num_tokens, 2, go);
    case 4:
      return launch_words<std::uint32_t>(row_bytes, num_tokens, 2, go);
    default:
      return launch_words<std::uint16_t>(row_bytes, num_tokens, 2, go);
  }
}

cudaError_t launch_rms_norm(const void* x, const void* w, float eps, void* out,
                            std::int64_t num_rows, std::int64_t hidden, cudaStream_t stream) {
  if (num_rows < 0 || hidden < 0 || num_rows > kMaxGridX) return cudaErrorInvalidValue;
  if (num_rows == 0 || hidden == 0) return cudaSuccess;
  if (!x || !w || !out) return cudaErrorInvalidValue;
  const auto* xb = static_cast<const bf16*>(x);
  const auto* wb = static_cast<const bf16*>(w);
  auto* ob = static_cast<bf16*>(out);
  const int vec = bf16_vec_width(hidden, x, w, out);
  const dim3 grid(static_cast<unsigned>(num_rows));
  const dim3 block(row_threads(hidden / vec, 1024));
  if (vec == 8) {
    rms_norm_kernel<8><<<grid, block, 0, stream>>>(xb, wb, eps, ob, hidden);
  } else if (vec == 2) {
    rms_norm_kernel<2><<<grid, block, 0, stream>>>(xb, wb, eps, ob, hidden);
  } else {
    rms_norm_kernel<1><<<grid, block, 0, stream>>>(xb, wb, eps, ob, hidden);
  }
  return cudaGetLastError();
}

cudaError_t launch_add_rms_norm(void* residual, const void* x, const void* w, float eps, void* out,
                                std::int64_t num_rows, std::int64_t hidden, cudaStream_t stream) {
  if (num_rows < 0 || hidden < 0 || num_rows > kMaxGridX) return cudaErrorInvalidValue;
  if (num_rows == 0 || hidden == 0) return cudaSuccess;
  if (!residual || !x || !w || !out) return cudaErrorInvalidValue;
  auto* rb = static_cast<bf16*>(residual);
  const auto* xb = static_cast<const bf16*>(x);
  const auto* wb = static_cast<const bf16*>(w);
  auto* ob = static_cast<bf16*>(out);
  const int vec = bf16_vec_width(hidden, residual, x, w, out);
  const dim3 grid(static_cast<unsigned>(num_rows));
  const dim3 block(row_threads(hidden / vec, 1024));
  if (vec == 8) {
    add_rms_norm_kernel<8><<<grid, block, 0, stream>>>(rb, xb, wb, eps, ob, hidden);
  } else if (vec == 2) {
    add_rms_norm_kernel<2><<<grid, block, 0, stream>>>(rb, xb, wb, eps, ob, hidden);
  } else {
    add_rms_norm_kernel<1><<<grid, block, 0, stream>>>(rb, xb, wb, eps, ob, hidden);
  }
  return cudaGetLastError();
}

cudaError_t launch_head_rms_norm(void* x, const void* w, float eps, std::int64_t num_tokens,
                                 std::int64_t num_heads, std::int32_t head_dim,
                                 cudaStream_t stream) {
  if (num_tokens < 0 || num_heads < 0 || head_dim < 0) return cudaErrorInvalidValue;
  const std::int64_t num_slices = num_tokens * num_heads;
  if (num_slices == 0 || head_dim == 0) return cudaSuccess;
  if (!x || !w) return cudaErrorInvalidValue;
  constexpr unsigned kWarps = 4;
  const std::int64_t blocks = (num_slices + kWarps - 1) / kWarps;
  if (blocks > kMaxGridX) return cudaErrorInvalidValue;
  auto* xb = static_cast<bf16*>(x);
  const auto* wb = static_cast<const bf16*>(w);
  const dim3 grid(static_cast<unsigned>(blocks));
  const dim3 block(32 * kWarps);
  const int vec = bf16_vec_width(head_dim, x, w);
  if (vec == 8) {
    head_rms_norm_kernel<8><<<grid, block, 0, stream>>>(xb, wb, eps, num_slices, head_dim);
  } else if (vec == 2) {
    head_rms_norm_kernel<2><<<grid, block, 0, stream>>>(xb, wb, eps, num_slices, head_dim);
  } else {
    head_rms_norm_kernel<1><<<grid, block, 0, stream>>>(xb, wb, eps, num_slices, head_dim);
  }
  return cudaGetLastError();
}

cudaError_t launch_rope(void* q, void* k, std::int64_t num_tokens, std::int32_t num_q_heads,
                        std::int32_t num_kv_heads, std::int32_t head_dim,
                        const std::int32_t* positions, const float* inv_freq, cudaStream_t stream) {
  if (num_tokens < 0 || num_tokens > kMaxGridX || num_q_heads < 0 || num_kv_heads < 0 ||
      head_dim < 0 || head_dim % 2 != 0 || head_dim / 2 > kMaxRopeHalf) {
    return cudaErrorInvalidValue;
  }
  const int half = head_dim / 2;
  if (num_tokens == 0 || half == 0 || num_q_heads + num_kv_heads == 0) return cudaSuccess;
  if ((num_q_heads > 0 && !q) || (num_kv_heads > 0 && !k) || !positions || !inv_freq) {
    return cudaErrorInvalidValue;
  }
  auto* qb = static_cast<bf16*>(q);
  auto* kb = static_cast<bf16*>(k);
  // q and k rows start at multiples of head_dim, so half's width and the bases decide.
  const int vec = bf16_vec_width(half, q, k);
  const dim3 grid(static_cast<unsigned>(num_tokens));
  const dim3 block(
      row_threads(static_cast<std::int64_t>(num_q_heads + num_kv_heads) * half / vec, 256));
  if (vec == 8) {
    rope_kernel<8><<<grid, block, 0, stream>>>(qb, kb, positions, inv_freq, num_q_heads,
                                               num_kv_heads, head_dim);
  } else if (vec == 2) {
    rope_kernel<2><<<grid, block, 0, stream>>>(qb, kb, positions, inv_freq, num_q_heads,
                                               num_kv_heads, head_dim);
  } else {
    rope_kernel<1><<<grid, block, 0, stream>>>(qb, kb, positions, inv_freq, num_q_heads,
                                               num_kv_heads, head_dim);
  }
  return cudaGetLastError();
}

cudaError_t launch_silu_mul(const void* gate, const void* up, void* out, std::int64_t n,
                            cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!gate || !up || !out) return cudaErrorInvalidValue;
  const auto* gb = static_cast<const bf16*>(gate);
  const auto* ub = static_cast<const bf16*>(up);
  auto* ob = static_cast<bf16*>(out);
  // The tail loop covers n % 8, so only the pointers decide the width.
  if (aligned(gate, 16) && aligned(up, 16) && aligned(out, 16)) {
    silu_mul_kernel<8><<<flat_blocks(n / 8 + 1), kFlatThreads, 0, stream>>>(gb, ub, ob, n);
  } else {
    silu_mul_kernel<1><<<flat_blocks(n), kFlatThreads, 0, stream>>>(gb, ub, ob, n);
  }
  return cudaGetLastError();
}

cudaError_t launch_convert_f32_to_bf16(const float* in, void* out, std::int64_t n,
                                       cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!in || !out) return cudaErrorInvalidValue;
  auto* ob = static_cast<std::uint16_t*>(out);
  if (aligned(in, 16) && aligned(out, 8)) {
    f32_to_bf16_kernel<4><<<flat_blocks(n / 4 + 1), kFlatThreads, 0, stream>>>(in, ob, n);
  } else {
    f32_to_bf16_kernel<1><<<flat_blocks(n), kFlatThreads, 0, stream>>>(in, ob, n);
  }
  return cudaGetLastError();
}

cudaError_t launch_convert_bf16_to_f32(const void* in, float* out, std::int64_t n,
                                       cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!in || !out) return cudaErrorInvalidValue;
  const auto* ib = static_cast<const std::uint16_t*>(in);
  if (aligned(in, 8) && aligned(out, 16)) {
    bf16_to_f32_kernel<4><<<flat_blocks(n / 4 + 1), kFlatThreads, 0, stream>>>(ib, out, n);
  } else {
    bf16_to_f32_kernel<1><<<flat_blocks(n), kFlatThreads, 0, stream>>>(ib, out, n);
  }
  return cudaGetLastError();
}

}  // namespace courier::gpu::cuda
