// The emulated PTX instructions against their definitions in the PTX ISA: mma.m16n8k16's
// fragments hold the elements its figures place in each lane and the product is A B + C;
// ldmatrix.x4 (and .trans) hands each lane the elements the ISA names; cp.async lands its bytes
// only at wait_group, group by group; ex2.approx.ftz flushes subnormals.
#include "gpu/cuda_emu/warp_matrix.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gpu/cuda_emu/block_runner.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_cuda_emu_warp_matrix {

namespace emu = courier::cuda_emu;
using Catch::Matchers::Contains;

namespace {

std::uint32_t bf16_bits(float f) {  // exact for the small integers used here
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b >> 16;
}

std::uint32_t pack(float lo, float hi) { return bf16_bits(lo) | (bf16_bits(hi) << 16); }

emu::launch_config warp() {
  emu::launch_config c;
  c.block = {32, 1, 1};
  return c;
}

}  // namespace

TEST_CASE("cuda emu: mma.m16n8k16 bf16 multiplies matrices given in the ISA's fragments",
          "[cuda_emu]") {
  float A[16][16], B[16][8], C[16][8];
  for (int m = 0; m < 16; ++m) {
    for (int k = 0; k < 16; ++k) A[m][k] = static_cast<float>((3 * m + k) % 7 - 3);
  }
  for (int k = 0; k < 16; ++k) {
    for (int n = 0; n < 8; ++n) B[k][n] = static_cast<float>((k + 2 * n) % 5 - 2);
  }
  for (int m = 0; m < 16; ++m) {
    for (int n = 0; n < 8; ++n) C[m][n] = static_cast<float>(m) + 0.5f * static_cast<float>(n);
  }
  float D[16][8];
  for (auto& row : D) {
    for (float& x : row) x = std::numeric_limits<float>::quiet_NaN();
  }
  emu::run_grid(warp(), [&] {
    const int l = emu::lane_id(), g = l / 4, t = l % 4;
    // The ISA's figure for A: a0,a1 (g, 2t..2t+1); a2,a3 (g+8, ..); a4,a5 (g, 2t+8..);
    // a6,a7 (g+8, ..).
    const std::uint32_t a[4] = {pack(A[g][2 * t], A[g][2 * t + 1]),
                                pack(A[g + 8][2 * t], A[g + 8][2 * t + 1]),
                                pack(A[g][2 * t + 8], A[g][2 * t + 9]),
                                pack(A[g + 8][2 * t + 8], A[g + 8][2 * t + 9])};
    // B: b0,b1 (k = 2t..2t+1, n = g); b2,b3 (k = 2t+8..2t+9, n = g).
    const std::uint32_t b[2] = {pack(B[2 * t][g], B[2 * t + 1][g]),
                                pack(B[2 * t + 8][g], B[2 * t + 9][g])};
    // C and D: c0,c1 (g, 2t..2t+1); c2,c3 (g+8, 2t..2t+1).
    const float c[4] = {C[g][2 * t], C[g][2 * t + 1], C[g + 8][2 * t], C[g + 8][2 * t + 1]};
    float d[4];
    emu::mma_m16n8k16_bf16(d, a, b, c);
    D[g][2 * t] = d[0];
    D[g][2 * t + 1] = d[1];
    D[g + 8][2 * t] = d[2];
    D[g + 8][2 * t + 1] = d[3];
  });
  for (int m = 0; m < 16; ++m) {
    for (int n = 0; n < 8; ++n) {
      float want = C[m][n];
      for (int k = 0; k < 16; ++k) want += A[m][k] * B[k][n];
      INFO("D[" << m << "][" << n << "]");
      CHECK(D[m][n] == want);
    }
  }
}

TEST_CASE("cuda emu: ldmatrix.x4 and .trans hand each lane the elements the ISA names",
          "[cuda_emu]") {
  alignas(16) std::uint16_t M[4][8][8];
  for (int i = 0; i < 4; ++i) {
    for (int r = 0; r < 8; ++r) {
      for (int c = 0; c < 8; ++c) M[i][r][c] = static_cast<std::uint16_t>(100 * i + 10 * r + c);
    }
  }
  std::vector<std::uint32_t> plain(32 * 4), trans(32 * 4);
  emu::run_grid(warp(), [&] {
    const int l = emu::lane_id();
    std::uint32_t r[4];
    emu::ldmatrix_x4(r, M[l / 8][l % 8], false);  // lanes 8i..8i+7: rows of matrix i
    std::memcpy(&plain[4 * l], r, sizeof r);
    emu::ldmatrix_x4(r, M[l / 8][l % 8], true);
    std::memcpy(&trans[4 * l], r, sizeof r);
  });
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4, t = l % 4;
    for (int i = 0; i < 4; ++i) {
      INFO("lane " << l << " matrix " << i);
      CHECK(plain[4 * l + i] == (M[i][g][2 * t] | (std::uint32_t{M[i][g][2 * t + 1]} << 16)));
      CHECK(trans[4 * l + i] == (M[i][2 * t][g] | (std::uint32_t{M[i][2 * t + 1][g]} << 16)));
    }
  }
}

TEST_CASE("cuda emu: cp.async lands at wait_group, all but the N most recent groups",
          "[cuda_emu]") {
  alignas(16) unsigned char global[64];
  for (int i = 0; i < 64; ++i) global[i] = static_cast<unsigned char>(i);
  emu::launch_config c;
  c.block = {1, 1, 1};
  c.shared_bytes = 64;
  std::vector<int> seen;
  emu::run_grid(c, [&] {
    auto* s = static_cast<unsigned char*>(emu::dynamic_shared());
    emu::cp_async_16(s, global);
    emu::cp_async_commit();
    emu::cp_async_16(s + 16, global + 16);
    emu::cp_async_16(s + 32, global + 32);
    emu::cp_async_commit();
    seen.push_back(s[0]);       // not landed: the block's shared memory as it started
    emu::cp_async_wait(1);      // the first group lands, the second may still be in flight
    seen.push_back(s[0]);
    seen.push_back(s[16]);
    emu::cp_async_wait(0);
    seen.push_back(s[16]);
    seen.push_back(s[47]);
  });
  CHECK(seen == std::vector<int>{0xCD, 0, 0xCD, 16, 47});
  // Copies never waited for, and a misaligned address, are errors.
  auto error_of = [&](const std::function<void()>& body) {
    try {
      emu::run_grid(c, body);
    } catch (const emu::emu_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(error_of([&] { emu::cp_async_16(emu::dynamic_shared(), global); }),
             Contains("1 cp.async copies never waited for"));
  CHECK_THAT(error_of([&] {
               emu::cp_async_16(static_cast<char*>(emu::dynamic_shared()) + 8, global);
             }),
             Contains("not 16-byte aligned"));
}

TEST_CASE("cuda emu: ex2.approx.ftz", "[cuda_emu]") {
  CHECK(emu::ex2_approx_ftz(1.0f) == 2.0f);
  CHECK(emu::ex2_approx_ftz(-1.0f) == 0.5f);
  CHECK(emu::ex2_approx_ftz(10.0f) == 1024.0f);
  CHECK(emu::ex2_approx_ftz(-126.0f) == std::ldexp(1.0f, -126));  // the least normal
  CHECK(emu::ex2_approx_ftz(-127.0f) == 0.0f);                     // subnormal: flushed
  CHECK(emu::ex2_approx_ftz(1e-40f) == 1.0f);                      // a subnormal input is 0
  CHECK(emu::ex2_approx_ftz(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(std::isinf(emu::ex2_approx_ftz(std::numeric_limits<float>::infinity())));
  CHECK(std::isnan(emu::ex2_approx_ftz(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("cuda emu: a warp-wide instruction needs every lane of a full warp", "[cuda_emu]") {
  auto error_of = [](unsigned threads, const std::function<void()>& body) {
    emu::launch_config c;
    c.block = {threads, 1, 1};
    try {
      emu::run_grid(c, body);
    } catch (const emu::emu_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::uint32_t a[4] = {}, b[2] = {};
  const float c[4] = {};
  CHECK_THAT(error_of(16, [&] {
               float d[4];
               emu::mma_m16n8k16_bf16(d, a, b, c);
             }),
             Contains("does not have"));
  CHECK_THAT(error_of(32, [&] {
               if (emu::lane_id() == 7) return;
               float d[4];
               emu::mma_m16n8k16_bf16(d, a, b, c);
             }),
             Contains("names lane 7, which exited"));
  alignas(16) static std::uint16_t rows[32][8];
  CHECK_THAT(error_of(32, [&] {
               std::uint32_t r[4];
               emu::ldmatrix_x4(r, rows[emu::lane_id()], emu::lane_id() == 3);
             }),
             Contains("different warp collectives"));
}

}  // namespace courier_test_gpu_cuda_emu_warp_matrix
