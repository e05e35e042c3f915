#pragma once
// What a forward pass of a model shape must move and compute at the least: the denominators of
// bench-forward's roofline fractions. Decode is bound by memory (every weight and every row's KV
// read once per step), prefill by tensor-core FLOPs.
#include <cstddef>
#include <cstdint>

#include "gpu/model/model_config.hpp"

namespace courier::model {

// Parameters of the shape (tied embeddings counted once).
std::int64_t parameter_count(const model_config& c);

// Bytes one decode step reads at the least: every weight except the embedding table (a step
// gathers only its rows; tied embeddings are read whole as the lm_head), plus each row's KV cache
// of `context` tokens in every layer.
double decode_step_bytes(const model_config& c, std::size_t weight_dtype_bytes,
                         std::size_t kv_dtype_bytes, std::int64_t batch, std::int64_t context);

// FLOPs of a prefill of `seqs` sequences of `tokens` tokens each from position 0: 2 per
// multiply-add of every linear layer on every token, the lm_head on each sequence's last token
// only, and causal attention (q.k and p.v over the unmasked keys: positions 0..t for token t).
double prefill_flops(const model_config& c, std::int64_t seqs, std::int64_t tokens);

}  // namespace courier::model
