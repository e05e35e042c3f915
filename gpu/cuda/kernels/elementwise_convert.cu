// The f32 <-> bf16 conversions of elementwise.hpp, bit for bit as gpu::f32_to_bf16 and
// gpu::bf16_to_f32 on the host.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda/kernels/elementwise.hpp"
#include "gpu/cuda/kernels/elementwise_common.cuh"
#include "gpu/cuda/kernels/launch.cuh"

namespace courier::gpu::cuda {

using namespace detail;

namespace {

// As gpu::f32_to_bf16 on the host, NaN payload included.
__device__ __forceinline__ std::uint16_t f32_to_bf16_bits(float f) {
  std::uint32_t b = __float_as_uint(f);
  if ((b & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((b >> 16) | 0x40u);
  b += 0x7fffu + ((b >> 16) & 1u);
  return static_cast<std::uint16_t>(b >> 16);
}

// The two directions: element types, their vectors of four, and one element's conversion.
struct to_bf16 {
  using in = float;
  using out = std::uint16_t;
  using in4 = float4;
  using out4 = ushort4;
  __device__ __forceinline__ static out convert(in f) { return f32_to_bf16_bits(f); }
};
struct to_f32 {
  using in = std::uint16_t;
  using out = float;
  using in4 = ushort4;
  using out4 = float4;
  __device__ __forceinline__ static out convert(in h) {
    return __uint_as_float(static_cast<std::uint32_t>(h) << 16);
  }
};

// VEC of 4 (a vector of four loaded and stored at once) or 1.
template <class C, int VEC>
__global__ void convert_kernel(const typename C::in* __restrict__ in,
                               typename C::out* __restrict__ out, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t num_vec = n / VEC;
  if constexpr (VEC == 4) {
    for (std::int64_t j = first; j < num_vec; j += stride) {
      const typename C::in4 v = reinterpret_cast<const typename C::in4*>(in)[j];
      typename C::out4 o;
      o.x = C::convert(v.x);
      o.y = C::convert(v.y);
      o.z = C::convert(v.z);
      o.w = C::convert(v.w);
      reinterpret_cast<typename C::out4*>(out)[j] = o;
    }
  }
  // The elements the vector loop left (all of them at VEC 1, which has no vector loop).
  const std::int64_t rest = VEC == 4 ? num_vec * VEC : 0;
  for (std::int64_t j = rest + first; j < n; j += stride) out[j] = C::convert(in[j]);
}

// Vectors of four where both sides are aligned to their vector (16 bytes for f32, 8 for bf16).
template <class C>
cudaError_t launch_convert(const typename C::in* in, typename C::out* out, std::int64_t n,
                           cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!in || !out) return cudaErrorInvalidValue;
  if (aligned(in, sizeof(typename C::in4)) && aligned(out, sizeof(typename C::out4))) {
    launch_kernel(convert_kernel<C, 4>, flat_blocks(n / 4 + 1), kFlatThreads, 0, stream, in, out,
                  n);
  } else {
    launch_kernel(convert_kernel<C, 1>, flat_blocks(n), kFlatThreads, 0, stream, in, out, n);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_convert_f32_to_bf16(const float* in, void* out, std::int64_t n,
                                       cudaStream_t stream) {
  return launch_convert<to_bf16>(in, static_cast<std::uint16_t*>(out), n, stream);
}

cudaError_t launch_convert_bf16_to_f32(const void* in, float* out, std::int64_t n,
                                       cudaStream_t stream) {
  return launch_convert<to_f32>(static_cast<const std::uint16_t*>(in), out, n, stream);
}

}  // namespace courier::gpu::cuda
