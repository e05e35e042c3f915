#pragma once
// Element types that weights, activations and the KV cache may have on a device.
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace courier::gpu {

enum class dtype : std::uint8_t { f32, bf16, f16, i32 };

constexpr std::size_t dtype_size(dtype t) {
  switch (t) {
    case dtype::f32: return 4;
    case dtype::bf16: return 2;
    case dtype::f16: return 2;
    case dtype::i32: return 4;
  }
  return 0;
}

constexpr const char* dtype_name(dtype t) {
  switch (t) {
    case dtype::f32: return "F32";
    case dtype::bf16: return "BF16";
    case dtype::f16: return "F16";
    case dtype::i32: return "I32";
  }
  return "?";
}

// Element i of 16-bit data that may start at any byte (a safetensors file does not align its
// tensors: an odd header length puts them at odd addresses, where a uint16_t read is undefined).
inline std::uint16_t u16_at(const void* data, std::size_t i) {
  std::uint16_t h;
  std::memcpy(&h, static_cast<const unsigned char*>(data) + 2 * i, sizeof h);
  return h;
}

// bf16 is the top half of an IEEE f32: widening is exact.
inline float bf16_to_f32(std::uint16_t h) {
  std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Round to nearest even, NaN kept a (quiet) NaN.
inline std::uint16_t f32_to_bf16(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

// IEEE half to f32, exact (subnormals included).
inline float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: renormalise
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// f32 to IEEE half, round to nearest even; overflow to infinity, NaN kept a NaN.
inline std::uint16_t f32_to_f16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {  // subnormal or zero in half: scale by 2^24 and round
    float a;
    std::memcpy(&a, &abs, sizeof a);
    const float scaled = a * 16777216.0f;  // exact: a power of two
    auto m = static_cast<std::uint32_t>(scaled);
    const float rem = scaled - static_cast<float>(m);
    if (rem > 0.5f || (rem == 0.5f && (m & 1u))) ++m;
    return static_cast<std::uint16_t>(sign | m);
  }
  std::uint32_t h = ((abs >> 13) - ((127u - 15u) << 10));
  const std::uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

// Element i of data of a float type (f32, bf16 or f16) as f32.
inline float float_at(dtype t, const void* data, std::size_t i) {
  if (t == dtype::bf16) return bf16_to_f32(u16_at(data, i));
  if (t == dtype::f16) return f16_to_f32(u16_at(data, i));
  float f;
  std::memcpy(&f, static_cast<const unsigned char*>(data) + 4 * i, sizeof f);
  return f;
}

}  // namespace courier::gpu
