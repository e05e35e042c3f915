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
  // The elements the vector loop left (all of them at VEC 1, which has no vector loop).
  const std::int64_t rest = VEC == 4 ? num_vec * VEC : 0;
  for (std::int64_t j = rest + first; j < n; j += stride) out[j] = f32_to_bf16_bits(in[j]);
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
  const std::int64_t rest = VEC == 4 ? num_vec * VEC : 0;  // as above
  for (std::int64_t j = rest + first; j < n; j += stride) {
    out[j] = __uint_as_float(static_cast<std::uint32_t>(in[j]) << 16);
  }
}

}  // namespace

cudaError_t launch_convert_f32_to_bf16(const float* in, void* out, std::int64_t n,
                                       cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!in || !out) return cudaErrorInvalidValue;
  auto* ob = static_cast<std::uint16_t*>(out);
  if (aligned(in, 16) && aligned(out, 8)) {
    launch_kernel(f32_to_bf16_kernel<4>, flat_blocks(n / 4 + 1), kFlatThreads, 0, stream, in, ob,
                  n);
  } else {
    launch_kernel(f32_to_bf16_kernel<1>, flat_blocks(n), kFlatThreads, 0, stream, in, ob, n);
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
    launch_kernel(bf16_to_f32_kernel<4>, flat_blocks(n / 4 + 1), kFlatThreads, 0, stream, ib, out,
                  n);
  } else {
    launch_kernel(bf16_to_f32_kernel<1>, flat_blocks(n), kFlatThreads, 0, stream, ib, out, n);
  }
  return cudaGetLastError();
}

}  // namespace courier::gpu::cuda
