#pragma once
// Internal to the attention kernels: the attention kernel (attention.cu's kernel 2), one CTA per
// (tile, kv head, chunk set); instantiated by attention.cu's launch for each head_dim.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda/kernels/attention_math.cuh"
#include "gpu/cuda/kernels/attention_params.cuh"

namespace courier::gpu::cuda::detail {

// Grid (tile CTAs, nk, splits), kThreads threads. Dynamic shared memory: K and V [2][64][HD + 8]
// each, bf16 (the 8-element pad spreads rows over the banks: a row stride of 4 or 20 words mod 32
// at every supported HD, so ldmatrix and the K fragment loads are conflict-free; Q passes through
// K's second buffer on its way to registers), then the running accumulators of the no-split fold,
// f32 [4 warps][HD / 2][32 lanes], each thread's own: 28, 52, 76 or 100 KiB for HD 32 to 128.
// kRunShared false keeps those accumulators in registers instead (68 KiB at HD 128): for GPUs
// whose blocks may not opt into 100 KiB (compute capability 8.6, 8.9 and 12.0 stop at 99 KiB).
template <int HD, bool kRunShared>
__global__ void __launch_bounds__(kThreads) attention_kernel(const attention_params p) {
  constexpr int kStride = HD + 8;
  constexpr int kOutTiles = HD / 8;  // n-tiles of O
  constexpr int kKSteps = HD / 16;   // k-steps of Q K^T
  constexpr int kRowParts = HD / 8;  // 16-byte parts of a row
  static_assert(kRows == kTile, "Q is staged in a K buffer");
  static_assert(HD % 32 == 0, "whole k-steps, n-tile pairs for ldmatrix x4, 16-byte row parts");
#ifdef COURIER_CUDA_EMULATED
  // The emulator's dynamic shared memory (a host compile has no extern __shared__ array).
  auto* const smem = static_cast<unsigned char*>(::courier::cuda_emu::dynamic_shared());
#else
  extern __shared__ __align__(16) unsigned char smem[];
#endif
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
  // acc_run[(n * 4 + e) * kRunStride] of this thread: the running accumulators of the no-split
  // fold (unrolled loops index them with constants, so the array lives in registers).
  constexpr int kRunStride = kRunShared ? 32 : 1;
  float run_registers[kRunShared ? 1 : kOutTiles * 4];
  float* const acc_run =
      kRunShared
          ? reinterpret_cast<float*>(v_s + 2 * kTile * kStride) + warp * (kOutTiles * 4) * 32 + lane
          : run_registers;

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
                    float& run = acc_run[(n * 4 + e) * kRunStride];
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
              __floats2bfloat162_rn(finish(acc_run[(n * 4 + 2 * i) * kRunStride], inv),
                                    finish(acc_run[(n * 4 + 2 * i + 1) * kRunStride], inv));
        }
      }
    }
  }
}

}  // namespace courier::gpu::cuda::detail
