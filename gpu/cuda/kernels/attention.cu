// Paged attention kernels; the contract and the plan are in attention.hpp.
//
// Three kernels, in stream order (1 once per step, by launch_attention_plan; 2 and 3 per layer,
// by launch_attention):
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
//
// Files: attention_params.cuh (constants, parameter blocks), attention_math.cuh (device helpers,
// the fold), attention_schedule.cu (1), attention_kernel.cuh (2), attention_combine.cuh (3); this
// file checks the plan against the batch and launches them.
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "gpu/cuda/kernels/attention.hpp"
#include "gpu/cuda/kernels/attention_combine.cuh"
#include "gpu/cuda/kernels/attention_kernel.cuh"
#include "gpu/cuda/kernels/attention_params.cuh"
#include "gpu/cuda/kernels/attention_schedule.cuh"
#include "gpu/cuda/kernels/launch.cuh"

namespace courier::gpu::cuda {

using namespace detail;

namespace {

bool aligned16(const void* ptr) {
  return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0;
}

// A value of the device current at the call, computed once per device: a kernel's attributes
// (cudaFuncSetAttribute) and the device's limits belong to the device current when they are set
// or read, and tensor parallelism drives one GPU per rank from one process.
class per_device {
 public:
  template <class F>  // F: cudaError_t(int device, int* value)
  cudaError_t get(int* value, F&& compute) {
    int device = 0;
    const cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return err;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = known_.find(device);
    if (it == known_.end()) {
      int v = 0;
      const cudaError_t e = compute(device, &v);
      it = known_.emplace(device, std::make_pair(e, v)).first;
    }
    *value = it->second.second;
    return it->second.first;
  }

 private:
  std::mutex mutex_;
  std::map<int, std::pair<cudaError_t, int>> known_;
};

template <int HD, bool kRunShared>
cudaError_t launch_variant(const attention_plan& plan, const attention_params& params,
                           const combine_params& combine, cudaStream_t stream) {
  constexpr std::size_t smem_bytes =
      attention_tile_bytes(HD) + (kRunShared ? attention_run_bytes(HD) : 0);
  static per_device allowed;  // more than 48 KB needs the opt-in, on each device
  int unused = 0;
  cudaError_t err = allowed.get(&unused, [](int, int*) {
    return cudaFuncSetAttribute(attention_kernel<HD, kRunShared>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize,
                                static_cast<int>(smem_bytes));
  });
  if (err != cudaSuccess) return err;
  const dim3 grid(static_cast<unsigned>(plan.num_tile_ctas),
                  static_cast<unsigned>(plan.sizes.num_kv_heads),
                  static_cast<unsigned>(plan.num_splits));
  launch_kernel(attention_kernel<HD, kRunShared>, grid, kThreads, smem_bytes, stream, params);
  err = cudaGetLastError();
  if (err != cudaSuccess || plan.num_splits <= 1) return err;
  const std::int64_t warps =
      static_cast<std::int64_t>(plan.sizes.num_tokens) * plan.sizes.num_q_heads;
  const auto blocks = static_cast<unsigned>((warps + kCombineWarps - 1) / kCombineWarps);
  launch_kernel(combine_kernel<HD>, blocks, kCombineWarps * 32, 0, stream, combine);
  return cudaGetLastError();
}

// The running accumulators in shared memory where the device lets a block have them beside the
// tiles, else in registers.
template <int HD>
cudaError_t launch_for(const attention_plan& plan, const attention_params& params,
                       const combine_params& combine, cudaStream_t stream) {
  static per_device optin;
  int limit = 0;
  const cudaError_t err = optin.get(&limit, [](int device, int* v) {
    return cudaDeviceGetAttribute(v, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  });
  if (err != cudaSuccess) return err;
  if (attention_tile_bytes(HD) + attention_run_bytes(HD) <= static_cast<std::size_t>(limit)) {
    return launch_variant<HD, true>(plan, params, combine, stream);
  }
  return launch_variant<HD, false>(plan, params, combine, stream);
}

}  // namespace

cudaError_t launch_attention_plan(const attention_plan& plan,
                                  const courier::gpu::attention_batch& batch, void* workspace,
                                  cudaStream_t stream) {
  const attention_sizes& s = plan.sizes;
  if (!plan.supported || batch.num_tokens != s.num_tokens) return cudaErrorInvalidValue;
  if (s.num_tokens == 0) return cudaSuccess;
  if (batch.num_seqs > s.num_seqs ||
      plan.tokens_per_tile != attention_rows_per_cta / plan.group_size || !batch.token_seq || !workspace || !aligned16(workspace)) return cudaErrorInvalidValue;
  auto* const tile_starts = static_cast<std::int32_t*>(workspace);
  return launch_attention_schedule(batch.token_seq, s.num_tokens, plan.tokens_per_tile,
                                   tile_starts, tile_starts + s.num_tokens + 1, stream);
}

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
