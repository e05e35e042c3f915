#pragma once
// LoRA adapters batched per token (device::lora_apply on the CUDA backend; the f32 reference is
// gpu/sim/sim_lora.cpp), the BGMV pattern of Punica and S-LoRA: every token picks its adapter by
// its slot in a pool, and two kernels run the low-rank product for the whole batch at once:
//   shrink: u[t, i] = sum_k a[(s * parts) * rank + i, k] * x[t, k] for i < parts * rank,
//   expand: out[t, c] += sum_j b[s * N + c, j] * u[t, p * rank + j] for c in part p,
// s = slots[t]. The layout of a and b is lora_weights' (gpu/tensor.hpp). x, out, a, b are bf16
// (`__nv_bfloat16`); u (tmp, the caller's workspace [T, ld_tmp], ld_tmp >= parts * rank) is f32;
// slots is int32. Every pointer is device memory; part_end is host memory (its `parts` values go
// into the kernel's parameters).
//
// A token whose slot is negative (the base model) or not below num_slots is skipped: its tmp row
// and its out row are left as they are (slots live in device memory: the host never reads them,
// so an out-of-pool slot cannot be refused; the kernels never read past the pool for it).
//
// Reductions are in f32 in an order fixed by K (shrink) and rank (expand) alone: shrink's block
// of 128 threads cuts K into chunks of 8 elements, chunk i to thread i % 128, each thread summing
// its chunks in order, then the 32 lanes of a warp (butterfly) and the 4 warps in order; expand
// sums j = 0 .. rank - 1 in order and adds to out in f32, rounding once to bf16. Vector (16-byte)
// loads are used where K (rank) is a multiple of 8 and the base pointers 16-byte aligned, scalar
// loads otherwise, with the same arithmetic. A token's result does not depend on the number of
// tokens or on the other tokens' slots.
//
// Each launcher enqueues on `stream` and returns the launch status (cudaErrorInvalidValue for
// impossible arguments: parts outside 1..3, rank or num_slots below 1, negative sizes, ld_tmp
// below parts * rank, part_end[parts - 1] != N, a null pointer with work to do); it allocates
// nothing and never synchronizes, so it can be captured in a CUDA graph. No tokens (and, for
// expand, no columns) launches nothing and returns cudaSuccess.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace courier::gpu::cuda {

// tmp[t, i] (f32, row stride ld_tmp) = sum_k a[(s * parts) * rank + i, k] * x[t, k] for
// i < parts * rank, s = slots[t]; x [T, K]; a [num_slots * parts * rank, K]. K may be 0 (u = 0).
// One block per (token, 4 rows of a).
[[nodiscard]] cudaError_t launch_lora_shrink(const void* x, std::int64_t num_tokens, std::int64_t K,
                                             const void* a, const std::int32_t* slots,
                                             std::int32_t num_slots, std::int32_t parts,
                                             std::int32_t rank, float* tmp, std::int64_t ld_tmp,
                                             cudaStream_t stream);

// out[t, c] = bf16(out[t, c] + sum_j b[s * N + c, j] * tmp[t, p * rank + j]) for c < N, p the
// part of c (the first p with c < part_end[p]), s = slots[t]; out [T, N]; b [num_slots * N,
// rank]; part_end [parts] on the host, part_end[parts - 1] == N. One thread per (token, column),
// blocks of 128 columns.
[[nodiscard]] cudaError_t launch_lora_expand(const float* tmp, std::int64_t ld_tmp,
                                             std::int64_t num_tokens, const void* b,
                                             const std::int32_t* slots, std::int32_t num_slots,
                                             std::int32_t parts, std::int32_t rank,
                                             const std::int64_t* part_end, std::int64_t N,
                                             void* out, cudaStream_t stream);

}  // namespace courier::gpu::cuda
