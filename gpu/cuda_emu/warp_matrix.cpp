#include "gpu/cuda_emu/warp_matrix.hpp"

#include <cmath>
#include <cstring>

#include "gpu/cuda_emu/block_runner.hpp"

namespace courier::cuda_emu {

namespace {

using detail::lane_words;

float bf16(std::uint32_t bits16) {
  const std::uint32_t b = (bits16 & 0xffffu) << 16;
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

std::uint32_t word(const lane_words& in, int i) {  // the i-th 32-bit word of the operands
  return static_cast<std::uint32_t>(in.w[i / 2] >> (32 * (i % 2)));
}

void set_word(lane_words& out, int i, std::uint32_t v) {
  std::uint64_t& w = out.w[i / 2];
  const int shift = 32 * (i % 2);
  w = (w & ~(std::uint64_t{0xffffffffu} << shift)) | (std::uint64_t{v} << shift);
}

float as_float(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::uint32_t float_bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// Operand words: 0-3 a, 4-5 b, 6-9 c. Result words: 0-3 d.
void mma_fn(const lane_words (&in)[warp_size], lane_words (&out)[warp_size]) {
  float A[16][16], B[16][8], C[16][8];
  for (int l = 0; l < warp_size; ++l) {
    const int g = l / 4, t = l % 4;
    const int rows[4] = {g, g + 8, g, g + 8};
    const int cols[4] = {2 * t, 2 * t, 2 * t + 8, 2 * t + 8};
    for (int r = 0; r < 4; ++r) {
      const std::uint32_t v = word(in[l], r);
      A[rows[r]][cols[r]] = bf16(v);
      A[rows[r]][cols[r] + 1] = bf16(v >> 16);
    }
    for (int r = 0; r < 2; ++r) {
      const std::uint32_t v = word(in[l], 4 + r);
      B[2 * t + 8 * r][g] = bf16(v);
      B[2 * t + 8 * r + 1][g] = bf16(v >> 16);
    }
    C[g][2 * t] = as_float(word(in[l], 6));
    C[g][2 * t + 1] = as_float(word(in[l], 7));
    C[g + 8][2 * t] = as_float(word(in[l], 8));
    C[g + 8][2 * t + 1] = as_float(word(in[l], 9));
  }
  float D[16][8];
  for (int m = 0; m < 16; ++m) {
    for (int n = 0; n < 8; ++n) {
      float acc = C[m][n];
      for (int k = 0; k < 16; ++k) acc += A[m][k] * B[k][n];
      D[m][n] = acc;
    }
  }
  for (int l = 0; l < warp_size; ++l) {
    const int g = l / 4, t = l % 4;
    out[l] = {};
    set_word(out[l], 0, float_bits(D[g][2 * t]));
    set_word(out[l], 1, float_bits(D[g][2 * t + 1]));
    set_word(out[l], 2, float_bits(D[g + 8][2 * t]));
    set_word(out[l], 3, float_bits(D[g + 8][2 * t + 1]));
  }
}

template <bool Trans>
void ldmatrix_fn(const lane_words (&in)[warp_size], lane_words (&out)[warp_size]) {
  std::uint16_t M[4][8][8];
  for (int l = 0; l < warp_size; ++l) {
    std::memcpy(M[l / 8][l % 8], reinterpret_cast<const void*>(in[l].w[0]), 16);
  }
  for (int l = 0; l < warp_size; ++l) {
    const int g = l / 4, t = l % 4;
    out[l] = {};
    for (int i = 0; i < 4; ++i) {
      const std::uint32_t lo = Trans ? M[i][2 * t][g] : M[i][g][2 * t];
      const std::uint32_t hi = Trans ? M[i][2 * t + 1][g] : M[i][g][2 * t + 1];
      set_word(out[l], i, lo | (hi << 16));
    }
  }
}

}  // namespace

void mma_m16n8k16_bf16(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                       const float (&c)[4]) {
  lane_words in;
  for (int i = 0; i < 4; ++i) set_word(in, i, a[i]);
  set_word(in, 4, b[0]);
  set_word(in, 5, b[1]);
  for (int i = 0; i < 4; ++i) set_word(in, 6 + i, float_bits(c[i]));
  const lane_words out = detail::warp_instruction("mma.sync.m16n8k16", mma_fn, in);
  for (int i = 0; i < 4; ++i) d[i] = as_float(word(out, i));
}

void ldmatrix_x4(std::uint32_t (&r)[4], const void* row, bool trans) {
  if (reinterpret_cast<std::uintptr_t>(row) % 16 != 0) {
    throw emu_error("ldmatrix: lane " + std::to_string(lane_id()) +
                    "'s row address is not 16-byte aligned (undefined)");
  }
  lane_words in;
  in.w[0] = reinterpret_cast<std::uintptr_t>(row);
  const lane_words out =
      trans ? detail::warp_instruction("ldmatrix.x4.trans", ldmatrix_fn<true>, in)
            : detail::warp_instruction("ldmatrix.x4", ldmatrix_fn<false>, in);
  for (int i = 0; i < 4; ++i) r[i] = word(out, i);
}

float ex2_approx_ftz(float x) {
  if (std::fpclassify(x) == FP_SUBNORMAL) x = 0.0f;
  const float y = std::exp2(x);
  if (std::fpclassify(y) == FP_SUBNORMAL) return std::copysign(0.0f, y);
  return y;
}

}  // namespace courier::cuda_emu
