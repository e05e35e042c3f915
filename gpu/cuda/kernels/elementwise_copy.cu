// The row copies of elementwise.hpp: embedding and gather_rows (rows of a table by index) and
// kv_write (token rows into KV-cache slots), in the widest word the row and pointers allow.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gpu/cuda/kernels/elementwise.hpp"
#include "gpu/cuda/kernels/elementwise_common.cuh"

namespace courier::gpu::cuda {

using namespace detail;

namespace {

constexpr std::int64_t kMaxGridY = 65535;

// The widest word (16, 4 or 2 bytes) that divides a row of row_bytes and keeps pointers aligned.
template <class... P>
int copy_word_bytes(std::int64_t row_bytes, P... ptrs) {
  if (row_bytes % 16 == 0 && (aligned(ptrs, 16) && ...)) return 16;
  if (row_bytes % 4 == 0 && (aligned(ptrs, 4) && ...)) return 4;
  return 2;
}

// out[i, :] = x[rows[i], :] in words of W; grid (num_rows, chunks of the row).
template <class W>
__global__ void gather_rows_kernel(const W* __restrict__ x, std::int64_t num_x_rows,
                                   const std::int32_t* __restrict__ rows, W* __restrict__ out,
                                   std::int64_t words_per_row) {
  const std::int64_t i = blockIdx.x;
  const std::int64_t r = rows[i];
  W* dst = out + i * words_per_row;
  const bool valid = r >= 0 && r < num_x_rows;
  const W* src = x + (valid ? r : 0) * words_per_row;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.y) * blockDim.x;
  for (std::int64_t j = static_cast<std::int64_t>(blockIdx.y) * blockDim.x + threadIdx.x;
       j < words_per_row; j += stride) {
    dst[j] = valid ? src[j] : W{};
  }
}

// cache[slots[t], :] = src[t, :] in words of W; grid (T, chunks of the row, 2: k then v).
template <class W>
__global__ void kv_write_kernel(const W* __restrict__ k, const W* __restrict__ v,
                                const std::int32_t* __restrict__ slots, W* __restrict__ k_cache,
                                W* __restrict__ v_cache, std::int64_t num_slots,
                                std::int64_t words_per_row) {
  const std::int64_t t = blockIdx.x;
  const std::int64_t slot = slots[t];
  if (slot < 0 || slot >= num_slots) return;
  const W* src = (blockIdx.z == 0 ? k : v) + t * words_per_row;
  W* dst = (blockIdx.z == 0 ? k_cache : v_cache) + slot * words_per_row;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.y) * blockDim.x;
  for (std::int64_t j = static_cast<std::int64_t>(blockIdx.y) * blockDim.x + threadIdx.x;
       j < words_per_row; j += stride) {
    dst[j] = src[j];
  }
}

// Launches the copy kernel K<W> for the word size chosen: grid (rows, chunks, z).
template <class W, class Launch>
cudaError_t launch_words(std::int64_t row_bytes, std::int64_t rows, unsigned z, Launch&& launch) {
  const std::int64_t words = row_bytes / static_cast<std::int64_t>(sizeof(W));
  const unsigned threads = row_threads(words, 256);
  std::int64_t chunks = (words + threads - 1) / threads;
  if (chunks > kMaxGridY) chunks = kMaxGridY;
  launch(static_cast<W*>(nullptr),
         dim3(static_cast<unsigned>(rows), static_cast<unsigned>(chunks), z), dim3(threads), words);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_embedding(const std::int32_t* ids, std::int64_t num_tokens, const void* table,
                             std::int64_t vocab_size, std::int64_t hidden, void* out,
                             cudaStream_t stream) {
  return launch_gather_rows(table, vocab_size, hidden, sizeof(bf16), ids, num_tokens, out, stream);
}

cudaError_t launch_gather_rows(const void* x, std::int64_t num_x_rows, std::int64_t cols,
                               std::size_t elem_size_bytes, const std::int32_t* rows,
                               std::int64_t num_rows, void* out, cudaStream_t stream) {
  if (num_rows < 0 || cols < 0 || num_x_rows < 0 || num_rows > kMaxGridX) {
    return cudaErrorInvalidValue;
  }
  if (elem_size_bytes != 2 && elem_size_bytes != 4) return cudaErrorInvalidValue;
  if (num_rows == 0 || cols == 0) return cudaSuccess;
  if (!x || !rows || !out) return cudaErrorInvalidValue;
  const std::int64_t row_bytes = cols * static_cast<std::int64_t>(elem_size_bytes);
  auto go = [&](auto* word, dim3 grid, dim3 block, std::int64_t words) {
    using W = std::remove_pointer_t<decltype(word)>;
    gather_rows_kernel<W><<<grid, block, 0, stream>>>(static_cast<const W*>(x), num_x_rows, rows,
                                                      static_cast<W*>(out), words);
  };
  switch (copy_word_bytes(row_bytes, x, out)) {
    case 16:
      return launch_words<uint4>(row_bytes, num_rows, 1, go);
    case 4:
      return launch_words<std::uint32_t>(row_bytes, num_rows, 1, go);
    default:
      return launch_words<std::uint16_t>(row_bytes, num_rows, 1, go);
  }
}

cudaError_t launch_kv_write(const void* k, const void* v, const std::int32_t* slot_mapping,
                            std::int64_t num_tokens, const kv_cache_view& cache,
                            cudaStream_t stream) {
  if (cache.type != dtype::bf16 || num_tokens < 0 || num_tokens > kMaxGridX ||
      cache.num_blocks < 0 || cache.block_size < 0 || cache.num_kv_heads < 0 ||
      cache.head_dim < 0) {
    return cudaErrorInvalidValue;
  }
  const std::int64_t width = static_cast<std::int64_t>(cache.num_kv_heads) * cache.head_dim;
  const std::int64_t num_slots = static_cast<std::int64_t>(cache.num_blocks) * cache.block_size;
  if (num_tokens == 0 || width == 0) return cudaSuccess;
  if (!k || !v || !slot_mapping || !cache.k || !cache.v) return cudaErrorInvalidValue;
  const std::int64_t row_bytes = width * static_cast<std::int64_t>(sizeof(bf16));
  auto go = [&](auto* word, dim3 grid, dim3 block, std::int64_t words) {
    using W = std::remove_pointer_t<decltype(word)>;
    kv_write_kernel<W><<<grid, block, 0, stream>>>(
        static_cast<const W*>(k), static_cast<const W*>(v), slot_mapping, static_cast<W*>(cache.k),
        static_cast<W*>(cache.v), num_slots, words);
  };
  switch (copy_word_bytes(row_bytes, k, v, cache.k, cache.v)) {
    case 16:
      return launch_words<uint4>(row_bytes, num_tokens, 2, go);
    case 4:
      return launch_words<std::uint32_t>(row_bytes, num_tokens, 2, go);
    default:
      return launch_words<std::uint16_t>(row_bytes, num_tokens, 2, go);
  }
}

}  // namespace courier::gpu::cuda
