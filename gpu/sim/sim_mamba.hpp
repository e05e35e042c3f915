#pragma once
// The sim backend's Mamba-2 arithmetic (NemotronH's mixer), in f32, over a ragged batch whose
// sequences each carry state from the steps before: the depthwise causal conv1d with its last
// K - 1 inputs, and the selective scan with its [heads, head_dim, state] SSM state. The scan is
// computed token by token (the recurrence that the chunked SSD form of transformers and of the
// CUDA kernels factorises), so a sequence's outputs and final state are the same, bit for bit,
// however its tokens are split into steps: one pass, chunks of any size, or one token at a time.
#include <cstdint>
#include <vector>

#include "gpu/mamba.hpp"

namespace courier::gpu::sim {

// One sequence's tokens in a ragged batch: rows [first, first + count), its state row, and
// whether it starts fresh (its first token here is its position 0: the state is taken as zeros
// and is then overwritten). save, when not null, is the span's [count] rows of
// mamba_batch::save_row: the state after its token i is also written to row save[i] >= 0.
struct mamba_span {
  std::int64_t first = 0;
  std::int64_t count = 0;
  std::int64_t state = 0;
  bool fresh = false;
  const std::int32_t* save = nullptr;
};

// out[t, c] = silu(bias[c] + sum_k w[c, k] * u[t - (K - 1) + k, c]) for the channels
// c in [c_begin, c_end) of C, where u is the span's input rows (in[t * ld_in + c]) preceded by
// its conv state, states[state, c, 0..K-2] (the K - 1 inputs before, oldest first); afterwards
// the state holds the span's last K - 1 inputs. bias may be null. out is [T, C].
void mamba_conv1d(const float* in, std::int64_t ld_in, std::int64_t C, std::int32_t K,
                  const float* w, const float* bias, float* states,
                  const std::vector<mamba_span>& spans, float* out, std::int64_t c_begin,
                  std::int64_t c_end);

using mamba_scan_shape = gpu::mamba_shape;

// The selective scan for the heads [h_begin, h_end), token by token within each span:
//   dt = max(softplus(dt_raw[t, h] + dt_bias[h]), dt_min)   (softplus(x) = x above 20)
//   S[h] = exp(dt * A[h]) * S[h] + dt * x[t, h, :] (outer) B[t, g, :],   A[h] = -exp(A_log[h])
//   y[t, h, :] = S[h] . C[t, g, :] + D[h] * x[t, h, :]
// xbc[t * ld_xbc + ...] holds x [num_heads * head_dim], then B and C [n_groups * state_size]
// each (the conv1d output); dt_raw[t * ld_dt + h]. states [rows, num_heads, head_dim,
// state_size] f32. y is [T, num_heads * head_dim].
void mamba_scan(const float* xbc, std::int64_t ld_xbc, const float* dt_raw, std::int64_t ld_dt,
                const float* A_log, const float* dt_bias, const float* D,
                const mamba_scan_shape& s, float* states, const std::vector<mamba_span>& spans,
                float* y, std::int32_t h_begin, std::int32_t h_end);

// The gated RMSNorm of one row (transformers' Zamba2RMSNormGated, gate applied before the norm):
// g = y * silu(z); out[i] = w[i] * g[i] / sqrt(mean over i's group of g^2 + eps), groups of
// `group` consecutive elements of n.
void gated_rms_norm_row(const float* y, const float* z, const float* w, std::int64_t n,
                        std::int64_t group, float eps, float* out);
// Its halves when a group's columns are on several ranks (device::gated_square_sums and
// gated_rms_norm_summed): the sum of g^2 over the row's n elements; out[i] = w[i] * g[i] * inv.
float gated_square_sum_row(const float* y, const float* z, std::int64_t n);
void gated_scale_row(const float* y, const float* z, const float* w, std::int64_t n, float inv,
                     float* out);

// softplus as torch computes it (threshold 20: the input itself above it).
float softplus(float x);

// Puts back the state of rows whose drafts were rejected (device::select_draft_states): for each
// of the n rows, a = how many of its drafts stand (draft j stands while it and the drafts before
// it equal the token sampled at the position before it); when a < num_drafts, state row
// save_row + a is copied over its slot in every layer of each buffer.
void select_draft_states(const std::int32_t* sampled, const std::int32_t* ids,
                         const gpu::draft_states* rows, std::int32_t n,
                         const std::vector<gpu::state_buffer>& buffers);

// The spans of a batch from its per-token state rows and positions (host-visible memory).
std::vector<mamba_span> mamba_spans(const gpu::mamba_batch& batch);

}  // namespace courier::gpu::sim
