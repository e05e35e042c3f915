#pragma once
// Paged attention over a ragged batch (device::attention on the CUDA backend): bf16 q, KV pages
// and out, f32 accumulation, GQA, causal through each sequence's block table. Planning (this
// header, host only, no GPU needed) is separate from running: launch_attention_plan once per
// step (the tile list), then launch_attention per layer; both capturable.
//
// Shapes: q and out [T, nq * head_dim]; the cache per layer K and V each
// [num_blocks, block_size, nk, head_dim]; query head h reads kv head h / (nq / nk); token t
// attends to positions [0, positions[t]] of sequence token_seq[t].
//
// Arithmetic, fixed per token: a token's keys are cut into chunks of attention_kv_chunk keys
// counted from position 0, each chunk into tiles of attention_kv_tile keys. Within a chunk the
// softmax is online over the tiles in order (f32, scores in log2 units); the chunks' states
// (max, sum, acc) are then folded in chunk order. Whether one CTA walks all chunks or several
// CTAs share them (split-K, partial states in the workspace, then a combine kernel) changes where
// the fold runs, not what it computes; so a token's result, bit for bit, depends neither on the
// rest of the batch nor on the plan.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gpu/tensor.hpp"

namespace courier::gpu::cuda {

// Constants, never planned: changing one changes every token's rounding.
inline constexpr std::int32_t attention_kv_chunk = 512;     // keys per softmax chunk
inline constexpr std::int32_t attention_kv_tile = 64;       // keys per inner step
inline constexpr std::int32_t attention_rows_per_cta = 64;  // (token, query head) rows per CTA
inline constexpr std::int32_t attention_max_splits = 64;    // CTAs sharing one tile's chunks
// The plan splits only when the partial states fit in this many bytes.
inline constexpr std::size_t attention_split_cap_bytes = std::size_t{64} << 20;

// What the plan is computed from: the batch's sizes, the model's heads, the GPU's SM count.
struct attention_sizes {
  std::int32_t num_tokens = 0;  // T
  std::int32_t num_seqs = 0;
  std::int32_t max_kv_len = 0;  // max over seq_kv_len; every positions[t] < max_kv_len
  std::int32_t num_q_heads = 0;
  std::int32_t num_kv_heads = 0;
  std::int32_t head_dim = 0;  // 32, 64, 96 or 128
  std::int32_t num_sms = 0;   // multiprocessors to fill; 0 counts as 1
};

// The launch: a scheduler kernel cuts the batch into tiles (up to tokens_per_tile consecutive
// tokens of one sequence; a tile also starts at every multiple of tokens_per_tile), then the
// attention kernel runs grid (num_tile_ctas, nk, num_splits) of 128 threads, each CTA taking
// tiles blockIdx.x, + num_tile_ctas, ... for one kv head, and chunks blockIdx.z, + num_splits,
// ...; with num_splits > 1 a combine kernel folds the tokens whose context spans several chunks.
// Invariant (supported): head_dim in {32, 64, 96, 128}, nk > 0, nq % nk == 0, nq / nk <= 64.
// (A head_dim must be a multiple of 32, for whole MMA k-steps, ldmatrix n-tile pairs and the
// combine's lanes; 256 would compile but spill registers and need 196 KiB of shared memory.)
struct attention_plan {
  attention_sizes sizes;
  bool supported = false;
  std::int32_t group_size = 0;       // nq / nk: query heads per kv head
  std::int32_t tokens_per_tile = 0;  // rows_per_cta / group_size
  std::int32_t num_tile_ctas = 0;    // min(T, ceil(T / tokens_per_tile) + num_seqs): every tile
                                     // its own CTA when each sequence's tokens are contiguous
  std::int32_t max_chunks = 0;       // ceil(max_kv_len / kv_chunk), at least 1
  std::int32_t num_splits = 1;       // 1: no split, no partials, no combine
};

inline attention_plan plan_attention(const attention_sizes& s) {
  attention_plan p;
  p.sizes = s;
  p.supported = (s.head_dim == 32 || s.head_dim == 64 || s.head_dim == 96 || s.head_dim == 128) &&
                s.num_kv_heads > 0 && s.num_q_heads > 0 && s.num_q_heads % s.num_kv_heads == 0 &&
                s.num_q_heads / s.num_kv_heads <= attention_rows_per_cta && s.num_tokens >= 0 &&
                s.num_seqs >= 0 && s.max_kv_len >= 0;
  if (!p.supported) return p;
  p.group_size = s.num_q_heads / s.num_kv_heads;
  p.tokens_per_tile = attention_rows_per_cta / p.group_size;
  const std::int64_t t = s.num_tokens;
  const std::int64_t tiles = (t + p.tokens_per_tile - 1) / p.tokens_per_tile + s.num_seqs;
  p.num_tile_ctas = static_cast<std::int32_t>(t < tiles ? t : tiles);
  const std::int64_t chunks =
      (static_cast<std::int64_t>(s.max_kv_len) + attention_kv_chunk - 1) / attention_kv_chunk;
  p.max_chunks = static_cast<std::int32_t>(chunks > 1 ? chunks : 1);
  p.num_splits = 1;
  // Split when the tiles alone give fewer than two CTAs per SM and some context spans chunks:
  // enough splits to reach two per SM, no more than there are chunks.
  const std::int64_t ctas = static_cast<std::int64_t>(p.num_tile_ctas) * s.num_kv_heads;
  const std::int64_t target = 2 * static_cast<std::int64_t>(s.num_sms > 0 ? s.num_sms : 1);
  if (p.max_chunks > 1 && ctas > 0 && ctas < target) {
    std::int64_t splits = (target + ctas - 1) / ctas;
    if (splits > p.max_chunks) splits = p.max_chunks;
    if (splits > attention_max_splits) splits = attention_max_splits;
    const std::size_t partial_bytes = static_cast<std::size_t>(t) *
                                      static_cast<std::size_t>(s.num_q_heads) *
                                      static_cast<std::size_t>(p.max_chunks) *
                                      (static_cast<std::size_t>(s.head_dim) + 2) * sizeof(float);
    if (partial_bytes <= attention_split_cap_bytes)
      p.num_splits = static_cast<std::int32_t>(splits);
  }
  return p;
}

namespace attention_detail {
inline std::size_t round_up_256(std::size_t n) {
  return (n + 255) / 256 * 256;
}
}  // namespace attention_detail

// Workspace layout (each part 256-byte aligned): the tile list, int32 [T + 2]; with splits, the
// partial (max, sum) float2 [T, nq, max_chunks], then the partial acc f32 [T, nq, max_chunks,
// head_dim]. Zero for an empty or unsupported plan.
inline std::size_t attention_tile_list_bytes(const attention_plan& p) {
  return attention_detail::round_up_256((static_cast<std::size_t>(p.sizes.num_tokens) + 2) *
                                        sizeof(std::int32_t));
}
inline std::size_t attention_partial_ml_bytes(const attention_plan& p) {
  if (p.num_splits <= 1) return 0;
  return attention_detail::round_up_256(static_cast<std::size_t>(p.sizes.num_tokens) *
                                        static_cast<std::size_t>(p.sizes.num_q_heads) *
                                        static_cast<std::size_t>(p.max_chunks) * 2 * sizeof(float));
}
inline std::size_t attention_workspace_bytes(const attention_plan& p) {
  if (!p.supported || p.sizes.num_tokens <= 0) return 0;
  std::size_t bytes = attention_tile_list_bytes(p);
  if (p.num_splits > 1) {
    bytes += attention_partial_ml_bytes(p) + static_cast<std::size_t>(p.sizes.num_tokens) *
                                                 static_cast<std::size_t>(p.sizes.num_q_heads) *
                                                 static_cast<std::size_t>(p.max_chunks) *
                                                 static_cast<std::size_t>(p.sizes.head_dim) *
                                                 sizeof(float);
  }
  return bytes;
}

// The most workspace any plan within `max` needs (every size of the planned batch no larger than
// max's, the heads and SM count equal): the tile list for max.num_tokens tokens plus the largest
// split partials. Splits happen only while the tiles give fewer than two CTAs per SM, which bounds
// the tokens of a split batch; plan_attention caps the partials at attention_split_cap_bytes.
inline std::size_t attention_workspace_bound(const attention_sizes& max) {
  const attention_plan p = plan_attention(max);
  if (!p.supported || max.num_tokens <= 0) return 0;
  const std::int64_t target = 2 * static_cast<std::int64_t>(max.num_sms > 0 ? max.num_sms : 1);
  // A split needs num_tile_ctas * nk < target, and num_tile_ctas >= ceil(T / tokens_per_tile).
  const std::int64_t split_ctas = (target - 1) / max.num_kv_heads;
  std::int64_t split_tokens = split_ctas * p.tokens_per_tile;
  if (split_tokens > max.num_tokens) split_tokens = max.num_tokens;
  std::size_t partials = static_cast<std::size_t>(split_tokens) *
                         static_cast<std::size_t>(max.num_q_heads) *
                         static_cast<std::size_t>(p.max_chunks) *
                         (static_cast<std::size_t>(max.head_dim) + 2) * sizeof(float);
  if (partials > attention_split_cap_bytes) partials = attention_split_cap_bytes;
  if (p.max_chunks <= 1) partials = 0;  // contexts within one chunk never split
  return attention_tile_list_bytes(p) + partials + 256;  // 256: the (max, sum) part's rounding
}

// Enqueues the planning kernel of `batch` on `stream`: it writes the tile list (the first
// attention_tile_list_bytes(plan) bytes of the workspace) from batch.token_seq. Run once per
// step; every launch_attention of the step reads that list, so the workspace's tile list must not
// be written between them. Same argument rules and return values as launch_attention (which
// checks the rest); capturable.
[[nodiscard]] cudaError_t launch_attention_plan(const attention_plan& plan,
                                                const courier::gpu::attention_batch& batch,
                                                void* workspace, cudaStream_t stream);

// Enqueues the attention of `batch` on `stream`: q, out [T, nq * head_dim] bf16; cache bf16 with
// the plan's nk and head_dim and a power-of-two block_size equal to batch.block_size; workspace
// of attention_workspace_bytes(plan) bytes, 16-byte aligned, whose tile list
// launch_attention_plan wrote for this plan and batch earlier in stream order (the rest is
// scratch, contents ignored). q, out and the cache pages are 16-byte aligned. The batch must
// match the plan: num_tokens equal, num_seqs and max_kv_len no larger. Returns
// cudaErrorInvalidValue (launching nothing) otherwise, cudaSuccess without launching for an empty
// batch, else the launch status. Allocates nothing and never synchronizes, so it can be captured
// in a CUDA graph.
[[nodiscard]] cudaError_t launch_attention(const attention_plan& plan, const void* q,
                                           courier::gpu::kv_cache_view cache,
                                           const courier::gpu::attention_batch& batch, float scale,
                                           void* out, void* workspace, cudaStream_t stream);

}  // namespace courier::gpu::cuda
