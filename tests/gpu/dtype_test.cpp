#include <catch2/catch.hpp>

#include <cmath>

#include "gpu/dtype.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_dtype {

using namespace courier::gpu;

TEST_CASE("dtype: every half value survives f16 -> f32 -> f16", "[dtype]") {
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const float f = f16_to_f32(static_cast<std::uint16_t>(h));
    if (std::isnan(f)) {
      CHECK(std::isnan(f16_to_f32(f32_to_f16(f))));
      continue;
    }
    INFO("half bits " << h);
    REQUIRE(f32_to_f16(f) == h);
  }
}

TEST_CASE("dtype: f16 known values and rounding to nearest even", "[dtype]") {
  CHECK(f16_to_f32(0x3c00) == 1.0f);
  CHECK(f16_to_f32(0xc000) == -2.0f);
  CHECK(f16_to_f32(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(f16_to_f32(0x7bff) == 65504.0f);
  CHECK(f32_to_f16(65520.0f) == 0x7c00);                // rounds up to infinity
  CHECK(f32_to_f16(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);  // tie: to even (down)
  CHECK(f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);  // tie: to even (up)
}

TEST_CASE("dtype: bf16 round trips and rounds to nearest even", "[dtype]") {
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const float f = bf16_to_f32(static_cast<std::uint16_t>(h));
    if (std::isnan(f)) continue;
    REQUIRE(f32_to_bf16(f) == h);
  }
  CHECK(f32_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);      // tie: to even (down)
  CHECK(f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3f82);  // tie: to even (up)
  CHECK(std::isnan(bf16_to_f32(f32_to_bf16(NAN))));
}

}  // namespace courier_test_gpu_dtype
