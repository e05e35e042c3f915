#pragma once
// Host launchers of the CUDA backend's element-wise and small kernels: the gather/scatter copies,
// the RMS norms, rotary embedding, silu_mul and the f32 <-> bf16 conversions. Each one mirrors an
// op of gpu/device.hpp, whose f32 reference is in gpu/sim/.
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

// out[T, H] = table[ids[t], :]; table [vocab_size, H]; ids [T]. An id outside [0, vocab_size)
// gives a zero row (the sim throws; the model checks ids on the host before they get here).
[[nodiscard]] cudaError_t launch_embedding(const std::int32_t* ids, std::int64_t num_tokens,
                                           const void* table, std::int64_t vocab_size,
                                           std::int64_t hidden, void* out, cudaStream_t stream);

// out[T, H] = x / sqrt(mean(x^2) + eps) * w, per row; w [H]. out may be x.
[[nodiscard]] cudaError_t launch_rms_norm(const void* x, const void* w, float eps, void* out,
                                          std::int64_t num_rows, std::int64_t hidden,
                                          cudaStream_t stream);

// residual[T, H] = bf16(residual + x); out[T, H] = rms_norm(residual, w, eps), normalising the
// stored (bf16-rounded) residual. out may be x or residual.
[[nodiscard]] cudaError_t launch_add_rms_norm(void* residual, const void* x, const void* w,
                                              float eps, void* out, std::int64_t num_rows,
                                              std::int64_t hidden, cudaStream_t stream);

// x[T, num_heads * head_dim]: rms_norm over each head's head_dim slice, in place; w [head_dim].
[[nodiscard]] cudaError_t launch_head_rms_norm(void* x, const void* w, float eps,
                                               std::int64_t num_tokens, std::int64_t num_heads,
                                               std::int32_t head_dim, cudaStream_t stream);

// Rotary embedding (HF rotate_half) in place on q[T, num_q_heads * head_dim] and
// k[T, num_kv_heads * head_dim]; positions [T]; inv_freq [head_dim / 2] f32. As the sim:
// angle = f32(f32(pos) * inv_freq[i]), cos/sin of it in double rounded to f32, and
// (x1, x2) -> (x1*c - x2*s, x2*c + x1*s) in f32 without FMA contraction.
// Requires an even head_dim <= 512.
[[nodiscard]] cudaError_t launch_rope(void* q, void* k, std::int64_t num_tokens,
                                      std::int32_t num_q_heads, std::int32_t num_kv_heads,
                                      std::int32_t head_dim, const std::int32_t* positions,
                                      const float* inv_freq, cudaStream_t stream);

// cache.k/v[slot_mapping[t]] = k/v[t] for t in [0, T); k, v [T, num_kv_heads * head_dim]; the
// cache is [num_blocks, block_size, num_kv_heads, head_dim] and must be bf16. A slot outside
// [0, num_blocks * block_size) (e.g. -1 for a padding token) is skipped.
[[nodiscard]] cudaError_t launch_kv_write(const void* k, const void* v,
                                          const std::int32_t* slot_mapping, std::int64_t num_tokens,
                                          const kv_cache_view& cache, cudaStream_t stream);

// out[n] = silu(gate) * up = gate / (1 + exp(-gate)) * up, element-wise over n = T * I.
[[nodiscard]] cudaError_t launch_silu_mul(const void* gate, const void* up, void* out,
                                          std::int64_t n, cudaStream_t stream);

// out[R, C] = x[rows[i], :] with x [num_x_rows, C] of elements of elem_size_bytes (2 or 4: bf16
// activations or f32 logits); rows [R]. A row index outside [0, num_x_rows) gives a zero row.
[[nodiscard]] cudaError_t launch_gather_rows(const void* x, std::int64_t num_x_rows,
                                             std::int64_t cols, std::size_t elem_size_bytes,
                                             const std::int32_t* rows, std::int64_t num_rows,
                                             void* out, cudaStream_t stream);

// out[n] (bf16) = in[n] (f32), rounded to nearest even; a NaN stays a quiet NaN with its sign and
// top payload bits, bit for bit as gpu::f32_to_bf16 on the host.
[[nodiscard]] cudaError_t launch_convert_f32_to_bf16(const float* in, void* out, std::int64_t n,
                                                     cudaStream_t stream);

// out[n] (f32) = in[n] (bf16), exact.
[[nodiscard]] cudaError_t launch_convert_bf16_to_f32(const void* in, float* out, std::int64_t n,
                                                     cudaStream_t stream);

}  // namespace courier::gpu::cuda
