#pragma once
// The arithmetic the CUDA sampler shares with the host: the draw's uniform and the weight exp.
// Plain C++ for the host compiler, __host__ __device__ under nvcc. Both must give the same bits
// as gpu/sim/sim_sampling.cpp, which the sampler is tested against: the uniform is the contract's
// hash, and exp_nonpositive is the sim's Cephes expf, one operation at a time, so that a token's
// weight is the same float on both sides.
#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define COURIER_SAMPLING_HD __host__ __device__
#else
#define COURIER_SAMPLING_HD
#endif

namespace courier::gpu::cuda {

inline constexpr std::uint64_t sampling_golden_gamma = 0x9E3779B97F4A7C15ULL;

COURIER_SAMPLING_HD inline std::uint64_t sampling_splitmix64(std::uint64_t x) {
  x += sampling_golden_gamma;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// The draw's uniform as an integer in [0, 2^53): u = sampling_uniform_bits / 2^53.
COURIER_SAMPLING_HD inline std::uint64_t sampling_uniform_bits(std::uint64_t seed,
                                                               std::uint64_t draw_index) {
  return sampling_splitmix64(sampling_splitmix64(seed ^ (draw_index * sampling_golden_gamma))) >>
         11;
}

// Equals courier::gpu::sim::sampling_uniform(seed, draw_index).
COURIER_SAMPLING_HD inline double sampling_uniform(std::uint64_t seed, std::uint64_t draw_index) {
  return static_cast<double>(sampling_uniform_bits(seed, draw_index)) * 0x1.0p-53;
}

// Correctly rounded float operations that the device compiler may not fuse into an FMA (fusing
// would change the bits). The host code is compiled with -std=c++17, which contracts nothing.
COURIER_SAMPLING_HD inline float sampling_mul(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
COURIER_SAMPLING_HD inline float sampling_add(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
COURIER_SAMPLING_HD inline float sampling_sub(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
COURIER_SAMPLING_HD inline float sampling_div(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

// exp(x) for x <= 0 as the sim computes it (Cephes' expf: reduction by ln 2, a degree-7
// polynomial; within 2 ulp and monotone). x <= -87, -inf and NaN give 0.
COURIER_SAMPLING_HD inline float exp_nonpositive(float x) {
  if (!(x > -87.0f)) return 0.0f;
  const float n = sampling_sub(sampling_add(sampling_mul(x, 1.44269504088896341f), 12582912.0f),
                               12582912.0f);  // round(x / ln 2)
  float r = sampling_sub(x, sampling_mul(n, 0.693359375f));
  r = sampling_sub(r, sampling_mul(n, -2.12194440e-4f));
  float y = sampling_add(sampling_mul(1.9875691500e-4f, r), 1.3981999507e-3f);
  y = sampling_add(sampling_mul(y, r), 8.3334519073e-3f);
  y = sampling_add(sampling_mul(y, r), 4.1665795894e-2f);
  y = sampling_add(sampling_mul(y, r), 1.6666665459e-1f);
  y = sampling_add(sampling_mul(y, r), 5.0000001201e-1f);
  y = sampling_add(sampling_add(sampling_mul(y, sampling_mul(r, r)), r), 1.0f);
  const std::int32_t two_to_n_bits = (static_cast<std::int32_t>(n) + 127) << 23;  // n in [-126, 0]
  float two_to_n;
  std::memcpy(&two_to_n, &two_to_n_bits, sizeof two_to_n);
  return sampling_mul(y, two_to_n);
}

// A float as an unsigned key whose order is the float order: NaN as -inf, -0 as +0 (the float
// comparison calls them equal, so must the key).
COURIER_SAMPLING_HD inline std::uint32_t sampling_ordered_key(float x) {
  constexpr float neg_inf = -__builtin_huge_valf();
  if (!(x > neg_inf)) x = neg_inf;
  if (x == 0.0f) x = 0.0f;
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

}  // namespace courier::gpu::cuda
