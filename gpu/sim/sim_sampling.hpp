#pragma once
// The sim backend's sampling op: one token per row of f32 logits, on the calling thread. It is the
// reference the CUDA sampler is tested against; the contract is spelled out in sim_sampling.cpp.
#include <cstdint>
#include <vector>

#include "gpu/sampling.hpp"

namespace courier::gpu::sim {

// Samples one token per row of logits [num_rows, vocab] (row-major f32, borrowed for the call).
// Requires batch.rows.size() == num_rows and each row's penalty and bias slices inside
// batch.penalty_tokens and batch.bias_tokens, with tokens < vocab. Deterministic: the same
// logits, parameters, seed and draw_index always give the same result, whatever else is in the
// batch.
std::vector<sample_result> sample_rows(const float* logits, std::int64_t num_rows,
                                       std::int64_t vocab, const sampling_batch& batch);

// The uniform in [0, 1) that a row's draw uses: a counter-based hash of (seed, draw_index), so a
// request's draws need no generator state and the CUDA sampler can reproduce them.
double sampling_uniform(std::uint64_t seed, std::uint64_t draw_index);

}  // namespace courier::gpu::sim
