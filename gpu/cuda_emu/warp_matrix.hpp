#pragma once
// The PTX warp-wide matrix instructions courier's kernels use, and ex2.approx, emulated from the
// PTX ISA's definitions ("Matrix Fragments for mma.m16n8k16 with floating point type",
// "Warp-level matrix load instruction: ldmatrix", "ex2"). Inside a kernel run by run_grid;
// every lane of a full warp executes each (`.sync.aligned`), or it is an emu_error.
#include <cstdint>

namespace courier::cuda_emu {

// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 d, a, b, c: D (16x8) = A (16x16) B (16x8)
// + C. With groupID g = lane / 4 and t = lane % 4, each .b32 holding two bf16 (the lower-indexed
// element in its low half):
//   a[0]: A[g][2t, 2t+1]      a[1]: A[g+8][2t, 2t+1]
//   a[2]: A[g][2t+8, 2t+9]    a[3]: A[g+8][2t+8, 2t+9]
//   b[0]: B[2t, 2t+1][g]   b[1]: B[2t+8, 2t+9][g]
//   c, d: [0] (g, 2t), [1] (g, 2t+1), [2] (g+8, 2t), [3] (g+8, 2t+1)
// Products of bf16 are exact in f32; the sum runs over k in order, each addition rounded to f32
// (the ISA leaves the order to the hardware: exact inputs give exact results either way).
void mma_m16n8k16_bf16(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                       const float (&c)[4]);

// ldmatrix.sync.aligned.m8n8.x4{.trans}.shared.b16 r, [row]: four 8x8 matrices of 16-bit
// elements; lanes 8i..8i+7 give the addresses of matrix i's rows 0..7 (16 bytes each, 16-byte
// aligned). Lane l (g = l / 4, t = l % 4) gets in r[i] matrix i's elements (g, 2t) and (g, 2t+1),
// or with .trans (2t, g) and (2t+1, g).
void ldmatrix_x4(std::uint32_t (&r)[4], const void* row, bool trans);

// ex2.approx.ftz.f32: 2^x; a subnormal input counts as zero and a subnormal result is flushed to
// zero of its sign (ftz).
float ex2_approx_ftz(float x);

}  // namespace courier::cuda_emu
