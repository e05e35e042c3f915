#pragma once
// The Mamba-2 mixer's kernels (NemotronH), by the contract of gpu/sim/sim_mamba.hpp (the
// reference they are tested against): activations bf16, weights bf16, the conv and SSM states
// f32 in device memory, carried between steps. A ragged batch is given per token: token t's
// state row token_state[t] (equal for a sequence's consecutive tokens) and its position
// positions[t] (a sequence whose first token here is at position 0 starts from zeros).
//
// The conv runs one thread per (token, channel), then one per (sequence, channel) for the new
// states; the scan runs its recurrence one warp per (sequence, head, head_dim element), the
// state row spread over the lanes: correct for any chunking, the decode step's natural form, and
// parallel over sequences and heads. Tokens with a save row (mamba_batch::save_row) also write
// their state there. The chunked SSD form (tensor-core matmuls per chunk, for long prefills) is
// not written yet: a prefill's tokens are scanned in order per sequence.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "gpu/mamba.hpp"

namespace courier::gpu::cuda {

inline constexpr std::int32_t max_conv_kernel = 8;
inline constexpr std::int32_t max_ssm_state = 256;

// out[t, c] = silu(bias[c] + sum_k w[c, k] * u[t - K + 1 + k, c]) for c < C, u the columns
// [col_begin, col_begin + C) of in's rows (row stride ld_in) after the sequence's conv state
// (states [rows, C, K - 1] f32, oldest first), which then holds its last K - 1 inputs. bias may be
// null. K <= max_conv_kernel.
[[nodiscard]] cudaError_t launch_mamba_conv1d(const void* in, std::int64_t ld_in,
                                              std::int64_t col_begin, std::int64_t C,
                                              std::int32_t K, const void* w, const void* bias,
                                              float* states, const mamba_batch& batch, void* out,
                                              cudaStream_t stream);

// The selective scan: y [T, heads * head_dim] from xbc [T, x | B | C] (row stride ld_xbc), dt in
// the columns [dt_col, dt_col + heads) of proj (row stride ld_proj), A_log, dt_bias, D [heads]
// (bf16), states [rows, heads, head_dim, state] f32. state_size <= max_ssm_state.
[[nodiscard]] cudaError_t launch_mamba_scan(const void* xbc, std::int64_t ld_xbc,
                                            const void* proj, std::int64_t ld_proj,
                                            std::int64_t dt_col, const void* A_log,
                                            const void* dt_bias, const void* D,
                                            const mamba_shape& shape, float* states,
                                            const mamba_batch& batch, void* y,
                                            cudaStream_t stream);

// device::select_draft_states: rows [n] in device memory; sampled and ids device int32 arrays.
[[nodiscard]] cudaError_t launch_select_draft_states(const std::int32_t* sampled,
                                                     const std::int32_t* ids,
                                                     const draft_states* rows, std::int32_t n,
                                                     state_buffer conv, state_buffer ssm,
                                                     cudaStream_t stream);

// out[r, i] = w[i] * g[i] / sqrt(mean of g^2 over i's group + eps), g = y[r, i] * silu(z[r, i]),
// z the first n columns of gate's rows (row stride ld_gate); groups of `group` columns.
[[nodiscard]] cudaError_t launch_gated_rms_norm(const void* y, const void* gate,
                                                std::int64_t ld_gate, const void* w,
                                                std::int64_t rows, std::int64_t n,
                                                std::int64_t group, float eps, void* out,
                                                cudaStream_t stream);

// The gated norm's halves when a group spans ranks (device::gated_square_sums and
// gated_rms_norm_summed): sums[r, c] (f32, row stride ld_sums) = the sum of g^2 over the row's n
// columns when c == col, else 0; then out[r, i] = w[i] * g[i] / sqrt(sums[r, col] / count + eps).
[[nodiscard]] cudaError_t launch_gated_square_sums(const void* y, const void* gate,
                                                   std::int64_t ld_gate, std::int64_t rows,
                                                   std::int64_t n, float* sums,
                                                   std::int64_t ld_sums, std::int64_t col,
                                                   cudaStream_t stream);
[[nodiscard]] cudaError_t launch_gated_rms_norm_summed(const void* y, const void* gate,
                                                       std::int64_t ld_gate, const void* w,
                                                       std::int64_t rows, std::int64_t n,
                                                       const float* sums, std::int64_t ld_sums,
                                                       std::int64_t col, std::int64_t count,
                                                       float eps, void* out, cudaStream_t stream);

// out[i] = max(x[i], 0)^2 for i < n.
[[nodiscard]] cudaError_t launch_relu2(const void* x, void* out, std::int64_t n,
                                       cudaStream_t stream);

}  // namespace courier::gpu::cuda
