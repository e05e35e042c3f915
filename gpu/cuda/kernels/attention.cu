// Paged attention kernels; the contract and the plan are in attention.hpp.
//
// Three kernels, in stream order:
//  1. schedule: one CTA cuts the token array into tiles (runs of one sequence, at most
//     tokens_per_tile long, also cut at multiples of tokens_per_tile) into the workspace.
//  2. attention: a CTA of 4 warps takes (tile, kv head, chunk set). Its 64 rows are the tile's
//     (token, query head) pairs, row r = token r / group, head r % group, 16 rows per warp.
//     K and V tiles of 64 keys are gathered through the block table into shared memory with
//     cp.async (double-buffered); S = Q K^T and O += P V run on mma.sync m16n8k16 bf16 with f32
//     accumulators, P staying in registers. Keys past the tile's context are zero-filled, never
//     read, so unwritten slots and unused block-table entries are never touched.
//     At the end of each chunk a row's state (m, l, acc) is folded into the CTA's running state
//     (no split), or written to the workspace (split), or, when the row's whole context is that
//     one chunk, finished and written out directly.
//  3. combine (split only): one warp per (token, head) whose context spans several chunks folds
//     the partial states in chunk order, with the same fold as the attention kernel.
//
// Batch invariance: rows are independent in the MMAs (a row of D depends on that row of A only),
// key tiles and chunks are counted from position 0, fully masked tiles are exact no-ops
// (max unchanged, rescale by exp2(0) = 1, p = 0), and the softmax arithmetic is written with
// explicit _rn intrinsics so that the compiler cannot contract it differently in two places.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda/kernels/attention.hpp"

namespace courier::gpu::cuda {

namespace {

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

// ---- device helpers ----

__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// 2^(a - b), exactly 1 when a == b (so that a tile or chunk that moves no max rescales nothing).
__device__ __forceinline__ float exp2_diff(float a, float b) {
  return a == b ? 1.0f : fast_exp2(__fsub_rn(a, b));
}

__device__ __forceinline__ std::uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const std::uint32_t*>(&h);
}

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async_16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_u32(dst)), "l"(src)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// d[16x8] += a[16x16] * b[16x8], bf16 in, f32 accumulate; fragments as in the PTX ISA.
__device__ __forceinline__ void mma_bf16(float (&d)[4], const std::uint32_t (&a)[4],
                                         std::uint32_t b0, std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
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

// ---- kernels ----

// tile_starts[i] = first token of tile i, tile_starts[num_tiles] = T. A tile starts at every
// multiple of tokens_per_tile and wherever token_seq changes; at most T tiles.
__global__ void __launch_bounds__(kScheduleThreads)
    schedule_kernel(const std::int32_t* token_seq, int num_tokens, int tokens_per_tile,
                    std::int32_t* tile_starts, std::int32_t* num_tiles) {
  __shared__ int warp_counts[kScheduleThreads / 32];
  __shared__ int warp_offsets[kScheduleThreads / 32];
  __shared__ int round_total;
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  int base = 0;
  for (int first = 0; first < num_tokens; first += kScheduleThreads) {
    const int t = first + tid;
    const bool start =
        t < num_tokens && (t % tokens_per_tile == 0 || token_seq[t] != token_seq[t - 1]);
    const unsigned ballot = __ballot_sync(0xffffffffu, start);
    if (lane == 0) warp_counts[warp] = __popc(ballot);
    __syncthreads();
    if (warp == 0) {
      const int v = warp_counts[lane];
      int inclusive = v;
#pragma unroll
      for (int off = 1; off < 32; off <<= 1) {
        const int n = __shfl_up_sync(0xffffffffu, inclusive, off);
        if (lane >= off) inclusive += n;
      }
      warp_offsets[lane] = inclusive - v;
      if (lane == 31) round_total = inclusive;
    }
    __syncthreads();
    if (start) {
      tile_starts[base + warp_offsets[warp] + __popc(ballot & ((1u << lane) - 1u))] = t;
    }
    base += round_total;
    __syncthreads();  // warp_counts and round_total are rewritten next round
  }
  if (tid == 0) {
    tile_starts[base] = num_tokens;
    *num_tiles = base;
  }
}

// Grid (tile CTAs, nk, splits), kThreads threads. Dynamic shared memory: K and V [2][64][HD + 8]
// each, bf16 (the 8-element pad spreads rows over the banks: a row stride of 4 or 20 words mod 32
// at every supported HD, so ldmatrix and the K fragment loads are conflict-free; Q passes through
// K's second buffer on its way to registers), then the running accumulators of the no-split fold,
// f32 [4 warps][HD / 2][32 lanes], each thread's own: 28, 52, 76 or 100 KiB for HD 32 to 128.
template <int HD>
__global__ void __launch_bounds__(kThreads) attention_kernel(const attention_params p) {
  constexpr int kStride = HD + 8;
  constexpr int kOutTiles = HD / 8;  // n-tiles of O
  constexpr int kKSteps = HD / 16;   // k-steps of Q K^T
  constexpr int kRowParts = HD / 8;  // 16-byte parts of a row
  static_assert(kRows == kTile, "Q is staged in a K buffer");
  static_assert(HD % 32 == 0, "whole k-steps, n-tile pairs for ldmatrix x4, 16-byte row parts");
  extern __shared__ __align__(16) unsigned char smem[];
  bf16* const k_s = reinterpret_cast<bf16*>(smem);
  bf16* const v_s = k_s + 2 * kTile * kStride;
  bf16* const q_s = k_s + kTile * kStride;  // K buffer 1, before the first K tile lands there

  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid >> 5, lane = tid & 31, g = lane >> 2, tig = lane & 3;
  const int kvh = static_cast<int>(blockIdx.y);
  const int z = static_cast<int>(blockIdx.z), num_z = static_cast<int>(gridDim.z);
  const int num_tiles = *p.num_tiles;
  const int group = p.group;
  const int block_size = 1 << p.block_shift;
  // acc_run(n, e) of this thread: the running accumulators of the no-split fold.
  float* const acc_run =
      reinterpret_cast<float*>(v_s + 2 * kTile * kStride) + warp * (kOutTiles * 4) * 32 + lane;

  for (int tile = static_cast<int>(blockIdx.x); tile < num_tiles;
       tile += static_cast<int>(gridDim.x)) {
    const int t0 = p.tile_starts[tile];
    const int n_tok = p.tile_starts[tile + 1] - t0;  // 1..tokens_per_tile <= 64
    // The tile's context: max position + 1, by every warp on its own (no shared state).
    int ctx = 0;
    if (lane < n_tok) ctx = p.positions[t0 + lane] + 1;
    if (lane + 32 < n_tok) ctx = max(ctx, p.positions[t0 + lane + 32] + 1);
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) ctx = max(ctx, __shfl_xor_sync(0xffffffffu, ctx, off));
    const int n_chunks = (ctx + kChunk - 1) / kChunk;
    if (z >= n_chunks) continue;  // uniform over the CTA
    const int my_chunks = (n_chunks - z + num_z - 1) / num_z;
    const int last_chunk = z + (my_chunks - 1) * num_z;
    const int last_tiles = min(kTilesPerChunk, (ctx - last_chunk * kChunk + kTile - 1) / kTile);
    const int total = (my_chunks - 1) * kTilesPerChunk + last_tiles;
    const std::int32_t* table =
        p.block_tables + static_cast<std::int64_t>(p.token_seq[t0]) * p.max_blocks_per_seq;

    // This thread's two rows: warp * 16 + g and + 8.
    int pos[2], tok[2], head[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int r = warp * 16 + g + 8 * i;
      const int tl = r / group;
      tok[i] = t0 + tl;
      head[i] = kvh * group + r % group;
      pos[i] = tl < n_tok ? p.positions[t0 + tl] : -1;
    }
    const bool warp_active = (warp * 16) / group < n_tok;  // rows only grow within a warp

    // Q rows through shared memory into A fragments; rows past the tile are zero.
    for (int i = tid; i < kRows * kRowParts; i += kThreads) {
      const int r = i / kRowParts, part = i % kRowParts, tl = r / group;
      uint4 val = make_uint4(0u, 0u, 0u, 0u);
      if (tl < n_tok) {
        const std::int64_t row =
            static_cast<std::int64_t>(t0 + tl) * p.num_q_heads + kvh * group + r % group;
        val = *reinterpret_cast<const uint4*>(p.q + row * HD + part * 8);
      }
      *reinterpret_cast<uint4*>(q_s + r * kStride + part * 8) = val;
    }
    __syncthreads();
    std::uint32_t qa[kKSteps][4];
    {
      const bf16* const qw = q_s + (warp * 16 + g) * kStride + 2 * tig;
#pragma unroll
      for (int kk = 0; kk < kKSteps; ++kk) {
        qa[kk][0] = *reinterpret_cast<const std::uint32_t*>(qw + kk * 16);
        qa[kk][1] = *reinterpret_cast<const std::uint32_t*>(qw + 8 * kStride + kk * 16);
        qa[kk][2] = *reinterpret_cast<const std::uint32_t*>(qw + kk * 16 + 8);
        qa[kk][3] = *reinterpret_cast<const std::uint32_t*>(qw + 8 * kStride + kk * 16 + 8);
      }
    }
    __syncthreads();  // K buffer 1 is free again

    // The keys of flat step `it`: chunk z + (it / tiles per chunk) * num_z.
    auto tile_key = [&](int it) {
      const int ci = it / kTilesPerChunk;
      return (z + ci * num_z) * kChunk + (it - ci * kTilesPerChunk) * kTile;
    };
    auto load_kv = [&](int it, int buf) {
      const int kb = tile_key(it);
      bf16* const kd = k_s + buf * kTile * kStride;
      bf16* const vd = v_s + buf * kTile * kStride;
      for (int i = tid; i < kTile * kRowParts; i += kThreads) {
        const int key = i / kRowParts, part = i % kRowParts, j = kb + key;
        bf16* const kdst = kd + key * kStride + part * 8;
        bf16* const vdst = vd + key * kStride + part * 8;
        if (j < ctx) {
          const std::int64_t slot =
              static_cast<std::int64_t>(table[j >> p.block_shift]) * block_size +
              (j & (block_size - 1));
          const std::int64_t off = (slot * p.num_kv_heads + kvh) * HD + part * 8;
          cp_async_16(kdst, p.k + off);
          cp_async_16(vdst, p.v + off);
        } else {
          *reinterpret_cast<uint4*>(kdst) = make_uint4(0u, 0u, 0u, 0u);
          *reinterpret_cast<uint4*>(vdst) = make_uint4(0u, 0u, 0u, 0u);
        }
      }
    };

    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
    float acc[kOutTiles][4];
    float m_run[2] = {-INFINITY, -INFINITY}, l_run[2] = {0.0f, 0.0f};
#pragma unroll
    for (int n = 0; n < kOutTiles; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[n][e] = 0.0f;
    }

    load_kv(0, 0);
    cp_async_commit();
    for (int it = 0; it < total; ++it) {
      if (it + 1 < total) load_kv(it + 1, (it + 1) & 1);
      cp_async_commit();
      cp_async_wait<1>();
      __syncthreads();  // tile `it` visible to all

      if (warp_active) {
        const bf16* const ks = k_s + (it & 1) * kTile * kStride;
        const bf16* const vs = v_s + (it & 1) * kTile * kStride;
        const int kb = tile_key(it);

        // S[16 x 64] = Q K^T for this warp's rows.
        float s[8][4];
#pragma unroll
        for (int n = 0; n < 8; ++n) {
#pragma unroll
          for (int e = 0; e < 4; ++e) s[n][e] = 0.0f;
        }
#pragma unroll
        for (int kk = 0; kk < kKSteps; ++kk) {
#pragma unroll
          for (int n = 0; n < 8; ++n) {
            const bf16* const kr = ks + (n * 8 + g) * kStride + kk * 16 + 2 * tig;
            mma_bf16(s[n], qa[kk], *reinterpret_cast<const std::uint32_t*>(kr),
                     *reinterpret_cast<const std::uint32_t*>(kr + 8));
          }
        }

        // Online softmax over this tile, per row (the 4 lanes of a quad share a row).
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          float tile_max = -INFINITY;
#pragma unroll
          for (int n = 0; n < 8; ++n) {
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int j = kb + n * 8 + 2 * tig + e;
              const float x = j <= pos[i] ? __fmul_rn(s[n][2 * i + e], p.scale_log2) : -INFINITY;
              s[n][2 * i + e] = x;
              tile_max = fmaxf(tile_max, x);
            }
          }
          tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
          tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
          const float m_new = fmaxf(m[i], tile_max);
          const float m_use = m_new == -INFINITY ? 0.0f : m_new;
          const float alpha = exp2_diff(m[i], m_use);
          m[i] = m_new;
          float sum = 0.0f;
#pragma unroll
          for (int n = 0; n < 8; ++n) {
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const float pr = fast_exp2(__fsub_rn(s[n][2 * i + e], m_use));
              s[n][2 * i + e] = pr;
              sum = __fadd_rn(sum, pr);
            }
          }
          l[i] = __fmaf_rn(l[i], alpha, sum);
#pragma unroll
          for (int n = 0; n < kOutTiles; ++n) {
            acc[n][2 * i] = __fmul_rn(acc[n][2 * i], alpha);
            acc[n][2 * i + 1] = __fmul_rn(acc[n][2 * i + 1], alpha);
          }
        }

        // O += P V, P from the S accumulators, V fragments by transposing loads.
#pragma unroll
        for (int kk = 0; kk < kTile / 16; ++kk) {
          std::uint32_t a[4];
          a[0] = pack_bf16(s[2 * kk][0], s[2 * kk][1]);
          a[1] = pack_bf16(s[2 * kk][2], s[2 * kk][3]);
          a[2] = pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]);
          a[3] = pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3]);
          const bf16* const vrow =
              vs + (kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * kStride + (lane >> 4) * 8;
#pragma unroll
          for (int np = 0; np < kOutTiles / 2; ++np) {
            std::uint32_t b[4];
            ldmatrix_x4_trans(b, vrow + np * 16);
            mma_bf16(acc[2 * np], a, b[0], b[1]);
            mma_bf16(acc[2 * np + 1], a, b[2], b[3]);
          }
        }

        // End of a chunk: fold, or write the partial state, or finish a one-chunk row.
        const bool chunk_end = (it % kTilesPerChunk) == kTilesPerChunk - 1 || it == total - 1;
        if (chunk_end) {
          const int c = z + (it / kTilesPerChunk) * num_z;
#pragma unroll
          for (int i = 0; i < 2; ++i) {
            float lr = l[i];
            lr = __fadd_rn(lr, __shfl_xor_sync(0xffffffffu, lr, 1));
            lr = __fadd_rn(lr, __shfl_xor_sync(0xffffffffu, lr, 2));
            const int row_chunks = pos[i] < 0 ? 0 : pos[i] / kChunk + 1;
            const std::int64_t qrow = static_cast<std::int64_t>(tok[i]) * p.num_q_heads + head[i];
            if (c < row_chunks) {
              if (!p.split) {
                const fold_weights w = fold_state(m_run[i], l_run[i], m[i], lr);
#pragma unroll
                for (int n = 0; n < kOutTiles; ++n) {
#pragma unroll
                  for (int e = 2 * i; e < 2 * i + 2; ++e) {
                    float& run = acc_run[(n * 4 + e) * 32];
                    run = fold_acc(run, acc[n][e], w);
                  }
                }
              } else if (row_chunks == 1) {
                const float inv = inverse_sum(lr);
                bf16* const o = p.out + qrow * HD + 2 * tig;
#pragma unroll
                for (int n = 0; n < kOutTiles; ++n) {
                  *reinterpret_cast<__nv_bfloat162*>(o + n * 8) = __floats2bfloat162_rn(
                      finish(acc[n][2 * i], inv), finish(acc[n][2 * i + 1], inv));
                }
              } else if (c < p.max_chunks) {
                const std::int64_t idx = qrow * p.max_chunks + c;
                if (tig == 0) p.part_ml[idx] = make_float2(m[i], lr);
                float* const pa = p.part_acc + idx * HD + 2 * tig;
#pragma unroll
                for (int n = 0; n < kOutTiles; ++n) {
                  *reinterpret_cast<float2*>(pa + n * 8) =
                      make_float2(acc[n][2 * i], acc[n][2 * i + 1]);
                }
              }
            }
            m[i] = -INFINITY;
            l[i] = 0.0f;
#pragma unroll
            for (int n = 0; n < kOutTiles; ++n) acc[n][2 * i] = acc[n][2 * i + 1] = 0.0f;
          }
        }
      }
      __syncthreads();  // buffer it & 1 is reloaded two steps on
    }
    cp_async_wait<0>();

    if (!p.split && warp_active) {
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        if (pos[i] < 0) continue;
        const float inv = inverse_sum(l_run[i]);
        bf16* const o =
            p.out + (static_cast<std::int64_t>(tok[i]) * p.num_q_heads + head[i]) * HD + 2 * tig;
#pragma unroll
        for (int n = 0; n < kOutTiles; ++n) {
          *reinterpret_cast<__nv_bfloat162*>(o + n * 8) =
              __floats2bfloat162_rn(finish(acc_run[(n * 4 + 2 * i) * 32], inv),
                                    finish(acc_run[(n * 4 + 2 * i + 1) * 32], inv));
        }
      }
    }
  }
}

// One warp per (token, head); only tokens whose context spans several chunks have partials.
// Lane i holds the kPerLane consecutive elements from i * kPerLane: an even count, so loads are
// float2 / float4 and stores bf16 pairs; with head_dim 32 (96) only 16 (24) lanes hold any. Each
// element's fold is its own, so the layout does not touch the arithmetic.
template <int HD>
__global__ void __launch_bounds__(kCombineWarps * 32) combine_kernel(const combine_params p) {
  constexpr int kPerLane = (HD / 32) % 2 == 0 ? HD / 32 : HD / 32 + 1;
  constexpr int kLanes = HD / kPerLane;
  static_assert(HD % 32 == 0 && HD % kPerLane == 0 && kLanes <= 32, "head_dim a multiple of 32");
  static_assert(kPerLane == 2 || kPerLane % 4 == 0, "float2 or float4 loads");
  const std::int64_t w = static_cast<std::int64_t>(blockIdx.x) * kCombineWarps + threadIdx.x / 32;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  if (w >= static_cast<std::int64_t>(p.num_tokens) * p.num_q_heads) return;
  if (lane >= kLanes) return;  // no warp-wide operations below
  const std::int64_t tok = w / p.num_q_heads;
  int chunks = p.positions[tok] / kChunk + 1;
  if (chunks <= 1) return;  // written by the attention kernel
  if (chunks > p.max_chunks) chunks = p.max_chunks;
  const std::int64_t base = w * p.max_chunks;
  float M = -INFINITY, L = 0.0f, acc[kPerLane];
#pragma unroll
  for (int e = 0; e < kPerLane; ++e) acc[e] = 0.0f;
  for (int c = 0; c < chunks; ++c) {
    const float2 ml = p.part_ml[base + c];
    const float* const pa = p.part_acc + (base + c) * HD + lane * kPerLane;
    float chunk[kPerLane];
    if constexpr (kPerLane % 4 == 0) {
#pragma unroll
      for (int e = 0; e < kPerLane; e += 4) {
        const float4 v = *reinterpret_cast<const float4*>(pa + e);
        chunk[e] = v.x, chunk[e + 1] = v.y, chunk[e + 2] = v.z, chunk[e + 3] = v.w;
      }
    } else {
      const float2 v = *reinterpret_cast<const float2*>(pa);
      chunk[0] = v.x, chunk[1] = v.y;
    }
    const fold_weights fw = fold_state(M, L, ml.x, ml.y);
#pragma unroll
    for (int e = 0; e < kPerLane; ++e) acc[e] = fold_acc(acc[e], chunk[e], fw);
  }
  const float inv = inverse_sum(L);
  bf16* const o = p.out + w * HD + lane * kPerLane;
#pragma unroll
  for (int e = 0; e < kPerLane; e += 2) {
    *reinterpret_cast<__nv_bfloat162*>(o + e) =
        __floats2bfloat162_rn(finish(acc[e], inv), finish(acc[e + 1], inv));
  }
}

// ---- launch ----

bool aligned16(const void* ptr) {
  return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0;
}

template <int HD>
cudaError_t launch_for(const attention_plan& plan, const attention_params& params,
                       const combine_params& combine, cudaStream_t stream) {
  constexpr std::size_t smem_bytes =
      static_cast<std::size_t>(4 * kTile) * (HD + 8) * 2 + std::size_t{4} * (HD / 2) * 32 * 4;
  cudaError_t err =
      cudaFuncSetAttribute(attention_kernel<HD>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(smem_bytes));
  if (err != cudaSuccess) return err;
  const dim3 grid(static_cast<unsigned>(plan.num_tile_ctas),
                  static_cast<unsigned>(plan.sizes.num_kv_heads),
                  static_cast<unsigned>(plan.num_splits));
  attention_kernel<HD><<<grid, kThreads, smem_bytes, stream>>>(params);
  err = cudaGetLastError();
  if (err != cudaSuccess || plan.num_splits <= 1) return err;
  const std::int64_t warps =
      static_cast<std::int64_t>(plan.sizes.num_tokens) * plan.sizes.num_q_heads;
  const auto blocks = static_cast<unsigned>((warps + kCombineWarps - 1) / kCombineWarps);
  combine_kernel<HD><<<blocks, kCombineWarps * 32, 0, stream>>>(combine);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_attention(const attention_plan& plan, const void* q,
                             courier::gpu::kv_cache_view cache,
                             const courier::gpu::attention_batch& batch, float scale, void* out,
                             void* workspace, cudaStream_t stream) {
  const attention_sizes& s = plan.sizes;
  if (!plan.supported || batch.num_tokens != s.num_tokens) return cudaErrorInvalidValue;
  if (s.num_tokens == 0) return cudaSuccess;
  const int bs = batch.block_size;
  if (batch.num_seqs > s.num_seqs || batch.max_kv_len > s.max_kv_len ||
      static_cast<std::int64_t>(plan.max_chunks) * attention_kv_chunk < batch.max_kv_len ||
      cache.type != dtype::bf16 || cache.head_dim != s.head_dim ||
      cache.num_kv_heads != s.num_kv_heads || cache.block_size != bs || bs <= 0 ||
      (bs & (bs - 1)) != 0 || plan.group_size != s.num_q_heads / s.num_kv_heads ||
      plan.tokens_per_tile != attention_rows_per_cta / plan.group_size || plan.num_tile_ctas < 1 ||
      plan.num_splits < 1 || plan.num_splits > attention_max_splits) {
    return cudaErrorInvalidValue;
  }
  if (!q || !out || !workspace || !cache.k || !cache.v || !batch.token_seq || !batch.positions ||
      !batch.block_tables || !aligned16(q) || !aligned16(out) || !aligned16(cache.k) ||
      !aligned16(cache.v) || !aligned16(workspace)) {
    return cudaErrorInvalidValue;
  }
  int shift = 0;
  while ((1 << shift) < bs) ++shift;

  auto* const ws = static_cast<unsigned char*>(workspace);
  auto* const tile_starts = reinterpret_cast<std::int32_t*>(ws);
  std::int32_t* const num_tiles = tile_starts + s.num_tokens + 1;
  float2* part_ml = nullptr;
  float* part_acc = nullptr;
  if (plan.num_splits > 1) {
    part_ml = reinterpret_cast<float2*>(ws + attention_tile_list_bytes(plan));
    part_acc = reinterpret_cast<float*>(ws + attention_tile_list_bytes(plan) +
                                        attention_partial_ml_bytes(plan));
  }

  schedule_kernel<<<1, kScheduleThreads, 0, stream>>>(batch.token_seq, s.num_tokens,
                                                      plan.tokens_per_tile, tile_starts, num_tiles);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return err;

  attention_params params{};
  params.q = static_cast<const bf16*>(q);
  params.k = static_cast<const bf16*>(cache.k);
  params.v = static_cast<const bf16*>(cache.v);
  params.out = static_cast<bf16*>(out);
  params.token_seq = batch.token_seq;
  params.positions = batch.positions;
  params.block_tables = batch.block_tables;
  params.tile_starts = tile_starts;
  params.num_tiles = num_tiles;
  params.part_ml = part_ml;
  params.part_acc = part_acc;
  params.num_q_heads = s.num_q_heads;
  params.num_kv_heads = s.num_kv_heads;
  params.group = plan.group_size;
  params.max_blocks_per_seq = batch.max_blocks_per_seq;
  params.block_shift = shift;
  params.max_chunks = plan.max_chunks;
  params.split = plan.num_splits > 1 ? 1 : 0;
  params.scale_log2 = scale * kLog2e;

  combine_params combine{};
  combine.positions = batch.positions;
  combine.part_ml = part_ml;
  combine.part_acc = part_acc;
  combine.out = static_cast<bf16*>(out);
  combine.num_tokens = s.num_tokens;
  combine.num_q_heads = s.num_q_heads;
  combine.max_chunks = plan.max_chunks;

  switch (s.head_dim) {
    case 32:
      return launch_for<32>(plan, params, combine, stream);
    case 64:
      return launch_for<64>(plan, params, combine, stream);
    case 96:
      return launch_for<96>(plan, params, combine, stream);
    case 128:
      return launch_for<128>(plan, params, combine, stream);
    default:
      return cudaErrorInvalidValue;  // not reached: the plan refuses other sizes
  }
}

}  // namespace courier::gpu::cuda
