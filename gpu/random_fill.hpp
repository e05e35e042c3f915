#pragma once
// Random weights for benchmarks that need a model's shape, not its values (bench-forward
// --random-weights): element i of a buffer filled with (seed, center, scale) is
// center + scale * u(seed, i), u uniform in [-1, 1) on a 2^-23 grid. Shared by the sim and the
// CUDA fill so both backends build the same model from the same seed (before rounding to their
// weight dtype). Plain C++ on the host, __host__ __device__ under nvcc.
#include <cstdint>

#ifdef __CUDACC__
#define COURIER_FILL_HD __host__ __device__
#else
#define COURIER_FILL_HD
#endif

namespace courier::gpu {

COURIER_FILL_HD inline float random_fill_value(std::uint64_t seed, std::uint64_t i, float center,
                                               float scale) {
  std::uint64_t x = seed ^ (i * 0x9E3779B97F4A7C15ULL);  // splitmix64 of (seed, i)
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  x ^= x >> 31;
  // 24 bits -> [-1, 1): exact in f32, so host and device agree bit for bit.
  const float u = static_cast<float>(static_cast<std::int32_t>(x >> 40) - (1 << 23)) * 0x1.0p-23f;
  return center + scale * u;
}

}  // namespace courier::gpu
