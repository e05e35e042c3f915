#pragma once
// What courier's CUDA sources use of the toolkit's headers, for their second compile on the
// emulator (COURIER_CUDA_EMULATED; include/cuda_runtime.h and its siblings lead here): the
// Runtime API's types and error codes as its documentation numbers them, the vector types,
// bf16 as cuda_bf16.h defines its conversions, the kernels' builtins on the emulator's threads,
// and the runtime functions (runtime.cpp, library courier_cuda_emu_runtime: never linked beside
// NVIDIA's libcudart). Grown with what each newly emulated source needs.
#include <math.h>  // the toolkit's headers bring expf and its kin into the global namespace

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "gpu/cuda_emu/block_runner.hpp"
#include "gpu/cuda_emu/runtime_api.hpp"
#include "gpu/cuda_emu/warp_matrix.hpp"  // the PTX instructions of the kernels' emulated branches

#define COURIER_CUDA_EMULATED 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
// A block's shared variables: the fibers of a block run on one host thread, one block at a time,
// so a thread-local static is the block's (kept from block to block, as shared memory is not
// cleared either).
#define __shared__ static thread_local

struct uint3 { unsigned x, y, z; };
struct float2 { float x, y; };
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(16) uint4 { unsigned x, y, z, w; };
struct alignas(8) ushort4 { unsigned short x, y, z, w; };

// The vector types' make_ functions (vector_functions.h): the fields in order.
inline float2 make_float2(float x, float y) { return {x, y}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }

#define threadIdx (::courier::cuda_emu::thread_idx())
#define blockIdx (::courier::cuda_emu::block_idx())
#define blockDim (::courier::cuda_emu::block_dim())
#define gridDim (::courier::cuda_emu::grid_dim())

inline unsigned __float_as_uint(float f) {
  unsigned u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float __uint_as_float(unsigned u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// cuda_bf16.h: the upper 16 bits of an f32; __float2bfloat16_rn rounds to nearest even and
// gives the canonical NaN 0x7fff for any NaN.
struct __nv_bfloat16 {
  unsigned short __x;
};
struct __nv_bfloat162 {
  __nv_bfloat16 x, y;
};
inline float __bfloat162float(__nv_bfloat16 h) {
  return __uint_as_float(static_cast<unsigned>(h.__x) << 16);
}
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return {0x7fff};
  u += 0x7fffu + ((u >> 16) & 1u);
  return {static_cast<unsigned short>(u >> 16)};
}
inline __nv_bfloat16 __float2bfloat16(float f) { return __float2bfloat16_rn(f); }  // RNE too
inline float2 __bfloat1622float2(__nv_bfloat162 h) {
  return {__bfloat162float(h.x), __bfloat162float(h.y)};
}
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) {
  return {__float2bfloat16_rn(a), __float2bfloat16_rn(b)};
}

// Block and warp synchronization, on the emulated threads (block_runner.hpp).
inline void __syncthreads() { ::courier::cuda_emu::syncthreads(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { ::courier::cuda_emu::syncwarp(mask); }
template <class T>
T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  return ::courier::cuda_emu::shfl_sync(mask, v, src, width);
}
template <class T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  return ::courier::cuda_emu::shfl_xor_sync(mask, v, lane_mask, width);
}
template <class T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return ::courier::cuda_emu::shfl_up_sync(mask, v, delta, width);
}
template <class T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return ::courier::cuda_emu::shfl_down_sync(mask, v, delta, width);
}
inline unsigned __ballot_sync(unsigned mask, int p) {
  return ::courier::cuda_emu::ballot_sync(mask, p);
}

// The _rn intrinsics: one IEEE operation each, rounded to nearest (the emulated compile does not
// contract them into FMAs: ISO C++ mode, no -mfma). __fmaf_rn is one rounding of a * b + c, as
// fmaf is; __frcp_rn the IEEE quotient 1 / x, denormals kept.
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
// rsqrtf: the device's is within 2 ulp (the Programming Guide's table of single-precision
// functions); here 1 / sqrtf, the host's correctly rounded square root then a rounded quotient.
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }

// __double2ull_rn: rounded to nearest even; out of range clamped to [0, 2^64 - 1] and NaN 0, as
// the PTX ISA's cvt.rni.u64.f64 does (float-to-integer conversions saturate).
inline unsigned long long __double2ull_rn(double x) {
  if (!(x > 0.0)) return 0;       // NaN too
  const double r = nearbyint(x);  // the default rounding mode: to nearest even
  if (r >= 18446744073709551616.0) return ~0ull;
  return static_cast<unsigned long long>(r);
}

// The integer intrinsics (the Math API's integer intrinsics).
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __clz(int x) {  // leading zero bits, 32 for 0
  return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x));
}
// The upper 64 bits of the 128-bit product, from 32-bit halves (no __int128 under -Wpedantic).
inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
  const unsigned long long lo = 0xffffffffull;
  const unsigned long long xl = x & lo, xh = x >> 32, yl = y & lo, yh = y >> 32;
  const unsigned long long ll = xl * yl, lh = xl * yh, hl = xh * yl, hh = xh * yh;
  const unsigned long long mid = (ll >> 32) + (lh & lo) + (hl & lo);  // < 3 * 2^32: no overflow
  return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

// min and max of two values of one type, the device's overloads (the float ones are fminf and
// fmaxf: NaN gives the other operand).
#define COURIER_EMU_MIN_MAX(T)                     \
  inline T min(T a, T b) { return b < a ? b : a; } \
  inline T max(T a, T b) { return a < b ? b : a; }
COURIER_EMU_MIN_MAX(int)
COURIER_EMU_MIN_MAX(unsigned)
COURIER_EMU_MIN_MAX(long)  // std::int64_t
COURIER_EMU_MIN_MAX(unsigned long)
COURIER_EMU_MIN_MAX(long long)
COURIER_EMU_MIN_MAX(unsigned long long)
#undef COURIER_EMU_MIN_MAX
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }

// Atomics: a block's threads never run at once (fibers switch only at barriers), but kernels
// that host threads wait for at the same time may, so each is a real atomic operation.
template <class T>
T atomicAdd(T* address, T value) {
  if constexpr (std::is_integral<T>::value) {
    return __atomic_fetch_add(address, value, __ATOMIC_RELAXED);
  } else {
    T old = *address;
    T desired;
    do {
      desired = old + value;
    } while (!__atomic_compare_exchange(address, &old, &desired, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED));
    return old;
  }
}
template <class T>
T atomicMin(T* address, T value) {
  T old = __atomic_load_n(address, __ATOMIC_RELAXED);
  while (value < old && !__atomic_compare_exchange_n(address, &old, value, false,
                                                     __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}
template <class T>
T atomicMax(T* address, T value) {
  T old = __atomic_load_n(address, __ATOMIC_RELAXED);
  while (value > old && !__atomic_compare_exchange_n(address, &old, value, false,
                                                     __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}
template <class T>
T atomicExch(T* address, T value) {
  return __atomic_exchange_n(address, value, __ATOMIC_RELAXED);
}

// cuda_runtime.h's C++ overload: a kernel named by its function, not its address as void*.
template <class T>
cudaError_t cudaFuncSetAttribute(T* entry, cudaFuncAttribute attr, int value) {
  return ::cudaFuncSetAttribute(reinterpret_cast<const void*>(entry), attr, value);
}

namespace courier::cuda_emu {

// A kernel launch on `stream`: the configuration checked now (an invalid one is the launch's
// error, as cudaGetLastError reports it after <<<...>>>), the kernel queued to run when the
// stream is waited for. A kernel that fails as it runs leaves its device a sticky
// cudaErrorLaunchFailure, its reason printed on stderr.
void enqueue_launch(cudaStream_t stream, const void* kernel, const launch_config& config,
                    std::function<void()> body);

}  // namespace courier::cuda_emu
