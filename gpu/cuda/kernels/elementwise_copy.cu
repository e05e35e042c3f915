// The row copies of elementwise.hpp: embedding and gather_rows (rows of a table by index), in the
// widest word the row and pointers allow. (Token rows go into KV-cache slots in the fused kernel
// of elementwise_qkv.cu.)
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gpu/cuda/kernels/elementwise.hpp"
#include "gpu/cuda/kernels/elementwise_common.cuh"
#include "gpu/cuda/kernels/launch.cuh"

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

// out[i, :] = x[rows[i] - first_row, :] in words of W (zeros for a row outside x); grid
// (num_rows, chunks of the row).
template <class W>
__global__ void gather_rows_kernel(const W* __restrict__ x, std::int64_t num_x_rows,
                                   std::int64_t first_row, const std::int32_t* __restrict__ rows,
                                   W* __restrict__ out, std::int64_t words_per_row) {
  const std::int64_t i = blockIdx.x;
  const std::int64_t r = rows[i] - first_row;
  W* dst = out + i * words_per_row;
  const bool valid = r >= 0 && r < num_x_rows;
  const W* src = x + (valid ? r : 0) * words_per_row;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.y) * blockDim.x;
  for (std::int64_t j = static_cast<std::int64_t>(blockIdx.y) * blockDim.x + threadIdx.x;
       j < words_per_row; j += stride) {
    dst[j] = valid ? src[j] : W{};
  }
}

// dst[dst_index[i]] = src[src_index[i]]: a step's tokens fed from the samples of the step before.
__global__ void copy_tokens_kernel(const std::int32_t* __restrict__ src,
                                   const std::int32_t* __restrict__ src_index,
                                   std::int32_t* __restrict__ dst,
                                   const std::int32_t* __restrict__ dst_index, std::int32_t n) {
  for (std::int32_t i = static_cast<std::int32_t>(blockIdx.x * blockDim.x + threadIdx.x); i < n;
       i += static_cast<std::int32_t>(gridDim.x * blockDim.x)) {
    dst[dst_index[i]] = src[src_index[i]];
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

namespace {

cudaError_t gather_rows_from(const void* x, std::int64_t num_x_rows, std::int64_t first_row,
                             std::int64_t cols, std::size_t elem_size_bytes,
                             const std::int32_t* rows, std::int64_t num_rows, void* out,
                             cudaStream_t stream) {
  if (num_rows < 0 || cols < 0 || num_x_rows < 0 || num_rows > kMaxGridX) {
    return cudaErrorInvalidValue;
  }
  if (elem_size_bytes != 2 && elem_size_bytes != 4) return cudaErrorInvalidValue;
  if (num_rows == 0 || cols == 0) return cudaSuccess;
  if (!x || !rows || !out) return cudaErrorInvalidValue;
  const std::int64_t row_bytes = cols * static_cast<std::int64_t>(elem_size_bytes);
  auto go = [&](auto* word, dim3 grid, dim3 block, std::int64_t words) {
    using W = std::remove_pointer_t<decltype(word)>;
    launch_kernel(gather_rows_kernel<W>, grid, block, 0, stream, static_cast<const W*>(x),
                  num_x_rows, first_row, rows, static_cast<W*>(out), words);
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

}  // namespace

cudaError_t launch_embedding(const std::int32_t* ids, std::int64_t num_tokens, const void* table,
                             std::int64_t first_id, std::int64_t table_rows, std::int64_t hidden,
                             void* out, cudaStream_t stream) {
  return gather_rows_from(table, table_rows, first_id, hidden, sizeof(bf16), ids, num_tokens, out,
                          stream);
}

cudaError_t launch_gather_rows(const void* x, std::int64_t num_x_rows, std::int64_t cols,
                               std::size_t elem_size_bytes, const std::int32_t* rows,
                               std::int64_t num_rows, void* out, cudaStream_t stream) {
  return gather_rows_from(x, num_x_rows, 0, cols, elem_size_bytes, rows, num_rows, out, stream);
}

cudaError_t launch_copy_tokens(const std::int32_t* src, const std::int32_t* src_index,
                               std::int32_t* dst, const std::int32_t* dst_index, std::int32_t n,
                               cudaStream_t stream) {
  if (n < 0) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!src || !src_index || !dst || !dst_index) return cudaErrorInvalidValue;
  const std::int32_t blocks = (n + 255) / 256;
  launch_kernel(copy_tokens_kernel, static_cast<unsigned>(blocks < 64 ? blocks : 64), 256, 0,
                stream, src, src_index, dst, dst_index, n);
  return cudaGetLastError();
}

}  // namespace courier::gpu::cuda
