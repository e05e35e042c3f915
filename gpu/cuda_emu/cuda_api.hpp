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

#define COURIER_CUDA_EMULATED 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
// A block's shared variables: the fibers of a block run on one host thread, one block at a time,
// so a thread-local static is the block's (kept from block to block, as shared memory is not
// cleared either).
#define __shared__ static thread_local

struct uint3 { unsigned x, y, z; };
struct float2 { float x, y; };
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(16) uint4 { unsigned x, y, z, w; };
struct alignas(8) ushort4 { unsigned short x, y, z, w; };

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
// contract them into FMAs: ISO C++ mode, no -mfma).
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }

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


namespace courier::cuda_emu {

// A kernel launch on `stream`: the configuration checked now (an invalid one is the launch's
// error, as cudaGetLastError reports it after <<<...>>>), the kernel queued to run when the
// stream is waited for. A kernel that fails as it runs leaves its device a sticky
// cudaErrorLaunchFailure, its reason printed on stderr.
void enqueue_launch(cudaStream_t stream, const void* kernel, const launch_config& config,
                    std::function<void()> body);

}  // namespace courier::cuda_emu
