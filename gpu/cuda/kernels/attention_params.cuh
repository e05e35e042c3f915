#pragma once
// Internal to the attention kernels (attention*.cu): the launch's constants and the parameter
// blocks the attention and combine kernels take. The contract and the plan are in attention.hpp.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpu/cuda/kernels/attention.hpp"

namespace courier::gpu::cuda::detail {

using bf16 = __nv_bfloat16;

constexpr int kThreads = 128;
constexpr int kRows = attention_rows_per_cta;  // 16 per warp
constexpr int kTile = attention_kv_tile;
constexpr int kChunk = attention_kv_chunk;
constexpr int kTilesPerChunk = kChunk / kTile;
constexpr int kScheduleThreads = 1024;
constexpr int kCombineWarps = 4;
constexpr float kLog2e = 1.4426950408889634f;
static_assert(kRows == 4 * 16, "one 16-row MMA tile per warp");
static_assert(kChunk % kTile == 0, "chunks are whole tiles");
static_assert(kTile == 64, "the S tile is 8 n-tiles of 8 keys");

// The attention kernel's dynamic shared memory (attention_kernel.cuh): the K and V tiles, two
// buffers each, rows padded by 8 elements; and the no-split fold's running accumulators, f32
// [4 warps][HD / 2][32 lanes], where the device allows both.
constexpr std::size_t attention_tile_bytes(int hd) {
  return static_cast<std::size_t>(4 * kTile) * static_cast<std::size_t>(hd + 8) * 2;
}
constexpr std::size_t attention_run_bytes(int hd) {
  return std::size_t{4} * static_cast<std::size_t>(hd / 2) * 32 * 4;
}

// Everything the attention kernel reads; pointers are device memory.
struct attention_params {
  const bf16* q;                     // [T, nq * HD]
  const bf16* k;                     // [num_blocks, block_size, nk, HD]
  const bf16* v;                     // same
  bf16* out;                         // [T, nq * HD]
  const std::int32_t* token_seq;     // [T]
  const std::int32_t* positions;     // [T]
  const std::int32_t* block_tables;  // [num_seqs, max_blocks_per_seq]
  const std::int32_t* tile_starts;   // [num_tiles + 1], from the scheduler
  const std::int32_t* num_tiles;     // [1]
  float2* part_ml;                   // [T, nq, max_chunks] (max, sum); split only
  float* part_acc;                   // [T, nq, max_chunks, HD]; split only
  int num_q_heads;
  int num_kv_heads;
  int group;
  int max_blocks_per_seq;
  int block_shift;  // log2(block_size)
  int max_chunks;
  int split;         // 1: write partial states, 0: fold in the CTA
  float scale_log2;  // scale * log2(e)
};

struct combine_params {
  const std::int32_t* positions;  // [T]
  const float2* part_ml;          // [T, nq, max_chunks]
  const float* part_acc;          // [T, nq, max_chunks, HD]
  bf16* out;                      // [T, nq * HD]
  int num_tokens;
  int num_q_heads;
  int max_chunks;
};

}  // namespace courier::gpu::cuda::detail
