#pragma once
// Internal to the element-wise kernels (elementwise_*.cu; the contracts are in elementwise.hpp):
// the launch limits, the vector-width choice and the bf16 vector loads and stores they share.
//
// Every kernel picks a vector width at launch: 16-byte accesses when the row length and every
// pointer allow it, then 4 bytes, then single elements, so any shape is handled. The width is a
// function of the row length and the pointers only, and so is every block shape and reduction
// order: a row's result never depends on how many rows are in the batch.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace courier::gpu::cuda::detail {

using bf16 = __nv_bfloat16;

constexpr unsigned kFlatThreads = 256;  // grid-stride kernels
constexpr std::int64_t kMaxFlatBlocks = 4096;
constexpr std::int64_t kMaxGridX = 0x7fffffff;

// ---- host-side helpers ----

inline bool aligned(const void* p, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

// The widest of 8, 2, 1 bf16 elements that divides n and keeps every pointer aligned.
template <class... P>
int bf16_vec_width(std::int64_t n, P... ptrs) {
  if (n % 8 == 0 && (aligned(ptrs, 16) && ...)) return 8;
  if (n % 2 == 0 && (aligned(ptrs, 4) && ...)) return 2;
  return 1;
}

// Threads for one block per row of n work items: a multiple of 32 in [32, max_threads].
inline unsigned row_threads(std::int64_t n, unsigned max_threads) {
  const std::int64_t t = (n + 31) / 32 * 32;
  return static_cast<unsigned>(t < 32 ? 32 : (t > max_threads ? max_threads : t));
}

inline unsigned flat_blocks(std::int64_t n) {
  const std::int64_t b = (n + kFlatThreads - 1) / kFlatThreads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > kMaxFlatBlocks ? kMaxFlatBlocks : b));
}

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

}  // namespace courier::gpu::cuda::detail
