#pragma once
// Host launchers of the CUDA backend's element-wise and small kernels: the row copies, the RMS
// norms, the fused q/k norm + rotary embedding + KV write, silu_mul and the f32 <-> bf16
// conversions. Each one mirrors an op of gpu/device.hpp, whose f32 reference is in gpu/sim/.
//
// Types: `void*` data is bf16 (`__nv_bfloat16`) unless a comment says otherwise; ids, positions and
// slots are int32; inv_freq is f32. Arithmetic is f32. Shapes are [rows, cols], row-major,
// contiguous. Every pointer is device memory.
//
// Each launcher enqueues on `stream` and returns the launch status (cudaErrorInvalidValue for
// impossible arguments); it allocates nothing and never synchronizes, so it can be captured in a
// CUDA graph. Empty work (a zero dimension) launches nothing and returns cudaSuccess. Each row's
// (token's) result depends only on that row: block shapes and reduction orders are chosen from the
// row length alone, never from the number of rows.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gpu/tensor.hpp"

namespace courier::gpu::cuda {

// out[T, H] = table[ids[t] - first_id, :]; table [table_rows, H] holds ids [first_id, first_id +
// table_rows) (the whole vocabulary, or a rank's range of it); ids [T]. An id outside gives a
// zero row (the sim throws for one outside the whole vocabulary; the model checks ids on the
// host before they get here).
[[nodiscard]] cudaError_t launch_embedding(const std::int32_t* ids, std::int64_t num_tokens,
                                           const void* table, std::int64_t first_id,
                                           std::int64_t table_rows, std::int64_t hidden,
                                           void* out, cudaStream_t stream);

// out[T, H] = x / sqrt(mean(x^2) + eps) * w, per row; w [H]. out may be x.
[[nodiscard]] cudaError_t launch_rms_norm(const void* x, const void* w, float eps, void* out,
                                          std::int64_t num_rows, std::int64_t hidden,
                                          cudaStream_t stream);

// residual[T, H] = bf16(residual + x); out[T, H] = rms_norm(residual, w, eps), normalising the
// stored (bf16-rounded) residual. out may be x or residual.
[[nodiscard]] cudaError_t launch_add_rms_norm(void* residual, const void* x, const void* w,
                                              float eps, void* out, std::int64_t num_rows,
                                              std::int64_t hidden, cudaStream_t stream);

// Per token t of qkv[T, (nq + 2 * nk) * head_dim] (row t = [q | k | v], heads of head_dim):
// each q head is RMS-normed with q_norm [head_dim] when q_norm is not null, rounded to bf16 (where
// a separate norm kernel would have stored it), rotated (HF rotate_half) and stored to
// q_out[T, nq * head_dim]; each k head likewise with k_norm, stored to cache.k at slot_mapping[t];
// v is copied to cache.v there. A slot outside [0, num_blocks * block_size) (e.g. -1 for a
// padding token) writes no k or v. positions [T]; inv_freq [head_dim / 2] f32. As the sim:
// rms = sqrt(mean(x^2) + eps) in f32, angle = f32(f32(pos) * inv_freq[i]), cos/sin of it in
// double rounded to f32, (x1, x2) -> (x1*c - x2*s, x2*c + x1*s) in f32 without FMA contraction.
// One block per token. Requires an even head_dim <= 512, a bf16 cache of nk heads of head_dim;
// q_out must not overlap qkv.
[[nodiscard]] cudaError_t launch_qkv_rope_kv_write(
    const void* qkv, std::int64_t num_tokens, std::int32_t num_q_heads, std::int32_t num_kv_heads,
    std::int32_t head_dim, const void* q_norm, const void* k_norm, float eps,
    const std::int32_t* positions, const float* inv_freq, const std::int32_t* slot_mapping,
    const kv_cache_view& cache, void* q_out, cudaStream_t stream);

// out[T, I] = silu(gate) * up = gate / (1 + exp(-gate)) * up, where gate_up[T, 2 * I] holds row
// t = [gate | up]: out[t, i] from gate_up[t, i] and gate_up[t, I + i].
[[nodiscard]] cudaError_t launch_silu_mul(const void* gate_up, void* out, std::int64_t num_rows,
                                          std::int64_t intermediate, cudaStream_t stream);

// out[R, C] = x[rows[i], :] with x [num_x_rows, C] of elements of elem_size_bytes (2 or 4: bf16
// activations or f32 logits); rows [R]. A row index outside [0, num_x_rows) gives a zero row.
[[nodiscard]] cudaError_t launch_gather_rows(const void* x, std::int64_t num_x_rows,
                                             std::int64_t cols, std::size_t elem_size_bytes,
                                             const std::int32_t* rows, std::int64_t num_rows,
                                             void* out, cudaStream_t stream);

// dst[dst_index[i]] = src[src_index[i]] for i < n (int32): tokens one step sampled, fed to the
// next step's ids on the device.
[[nodiscard]] cudaError_t launch_copy_tokens(const std::int32_t* src, const std::int32_t* src_index,
                                             std::int32_t* dst, const std::int32_t* dst_index,
                                             std::int32_t n, cudaStream_t stream);

// out[n] (bf16) = in[n] (f32), rounded to nearest even; a NaN stays a quiet NaN with its sign and
// top payload bits, bit for bit as gpu::f32_to_bf16 on the host.
[[nodiscard]] cudaError_t launch_convert_f32_to_bf16(const float* in, void* out, std::int64_t n,
                                                     cudaStream_t stream);

// out[n] (f32) = in[n] (bf16), exact.
[[nodiscard]] cudaError_t launch_convert_bf16_to_f32(const void* in, float* out, std::int64_t n,
                                                     cudaStream_t stream);

}  // namespace courier::gpu::cuda
