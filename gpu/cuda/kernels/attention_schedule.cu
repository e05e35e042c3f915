// The schedule kernel of paged attention (attention.cu's kernel 1): cuts the token array into
// tiles of one sequence.
#include "gpu/cuda/kernels/attention_schedule.cuh"

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda/kernels/attention_params.cuh"
#include "gpu/cuda/kernels/launch.cuh"

namespace courier::gpu::cuda::detail {

namespace {

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

}  // namespace

cudaError_t launch_attention_schedule(const std::int32_t* token_seq, int num_tokens,
                                      int tokens_per_tile, std::int32_t* tile_starts,
                                      std::int32_t* num_tiles, cudaStream_t stream) {
  launch_kernel(schedule_kernel, 1, kScheduleThreads, 0, stream, token_seq, num_tokens,
                tokens_per_tile, tile_starts, num_tiles);
  return cudaGetLastError();
}

}  // namespace courier::gpu::cuda::detail
