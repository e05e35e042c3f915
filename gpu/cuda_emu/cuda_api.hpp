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

#define COURIER_CUDA_EMULATED 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline

enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchFailure = 719,
};
typedef enum cudaError cudaError_t;

struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;  // nullptr: the legacy default stream

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};
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

extern "C" {
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char* cudaGetErrorString(cudaError_t error);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaDeviceSynchronize(void);
}

namespace courier::cuda_emu {

// A kernel launch on `stream`: the configuration checked now (an invalid one is the launch's
// error, as cudaGetLastError reports it after <<<...>>>), the kernel queued to run when the
// stream is waited for. A kernel that fails as it runs leaves its device a sticky
// cudaErrorLaunchFailure, its reason printed on stderr.
void enqueue_launch(cudaStream_t stream, const void* kernel, const launch_config& config,
                    std::function<void()> body);

}  // namespace courier::cuda_emu
