#pragma once
// Internal to the attention kernels: the device helpers of attention_kernel.cuh and
// attention_combine.cuh. PTX wrappers (ex2, cp.async, mma.sync, ldmatrix) and the fold of one
// softmax state into another, which both kernels share so that a split and an unsplit run
// compute the same bits.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace courier::gpu::cuda::detail {

__device__ __forceinline__ float fast_exp2(float x) {
#ifdef COURIER_CUDA_EMULATED
  return ::courier::cuda_emu::ex2_approx_ftz(x);
#else
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#endif
}

// 2^(a - b), exactly 1 when a == b (so that a tile or chunk that moves no max rescales nothing).
__device__ __forceinline__ float exp2_diff(float a, float b) {
  return a == b ? 1.0f : fast_exp2(__fsub_rn(a, b));
}

__device__ __forceinline__ std::uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const std::uint32_t*>(&h);
}

// The emulated branches (COURIER_CUDA_EMULATED: gpu/cuda_emu) are the same PTX instructions on
// the emulator, operands in the same registers; they take generic addresses, so no smem_u32.
#ifndef COURIER_CUDA_EMULATED
__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
#endif

__device__ __forceinline__ void cp_async_16(void* dst, const void* src) {
#ifdef COURIER_CUDA_EMULATED
  ::courier::cuda_emu::cp_async_16(dst, src);
#else
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_u32(dst)), "l"(src)
               : "memory");
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#ifdef COURIER_CUDA_EMULATED
  ::courier::cuda_emu::cp_async_commit();
#else
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#ifdef COURIER_CUDA_EMULATED
  ::courier::cuda_emu::cp_async_wait(N);
#else
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// d[16x8] += a[16x16] * b[16x8], bf16 in, f32 accumulate; fragments as in the PTX ISA.
__device__ __forceinline__ void mma_bf16(float (&d)[4], const std::uint32_t (&a)[4],
                                         std::uint32_t b0, std::uint32_t b1) {
#ifdef COURIER_CUDA_EMULATED
  // D = A B + C with C the old d, as the asm's {%0..%3} in both places.
  const std::uint32_t b[2] = {b0, b1};
  const float c[4] = {d[0], d[1], d[2], d[3]};
  ::courier::cuda_emu::mma_m16n8k16_bf16(d, a, b, c);
#else
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* p) {
#ifdef COURIER_CUDA_EMULATED
  ::courier::cuda_emu::ldmatrix_x4(r, p, true);
#else
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
#endif
}

// The fold of a chunk's state (m, l) into a running one (M, L); M == -inf means empty, and an
// empty running state takes the chunk's as it is (copy_chunk), without arithmetic. Returns how
// fold_acc combines the accumulators. The chunk is never empty (m finite).
struct fold_weights {
  float alpha;      // running acc weight
  float beta;       // chunk acc weight
  bool copy_chunk;  // running state was empty: acc = chunk acc
};

__device__ __forceinline__ fold_weights fold_state(float& M, float& L, float m, float l) {
  if (M == -INFINITY) {
    M = m;
    L = l;
    return {0.0f, 0.0f, true};
  }
  const float mn = fmaxf(M, m);
  const float alpha = exp2_diff(M, mn);
  const float beta = exp2_diff(m, mn);
  L = __fmaf_rn(L, alpha, __fmul_rn(l, beta));
  M = mn;
  return {alpha, beta, false};
}

__device__ __forceinline__ float fold_acc(float acc, float chunk_acc, const fold_weights& w) {
  return w.copy_chunk ? chunk_acc : __fmaf_rn(acc, w.alpha, __fmul_rn(chunk_acc, w.beta));
}

// acc / l, the same in both kernels.
__device__ __forceinline__ float finish(float acc, float inv_l) {
  return __fmul_rn(acc, inv_l);
}
__device__ __forceinline__ float inverse_sum(float l) {
  return l > 0.0f ? __frcp_rn(l) : 0.0f;
}

}  // namespace courier::gpu::cuda::detail
