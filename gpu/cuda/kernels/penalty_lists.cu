#include "gpu/cuda/kernels/penalty_lists.hpp"

#include "gpu/cuda/kernels/launch.cuh"

namespace courier::gpu::cuda {

namespace {

constexpr int count_threads = 256;

// One CTA per sampled row: every thread scans a stride of the list for the token, the lowest
// matching index wins (tokens are distinct, so there is at most one), then thread 0 counts it or
// appends it.
__global__ void __launch_bounds__(count_threads)
    count_penalty_tokens_kernel(const std::int32_t* __restrict__ tokens,
                                const std::int32_t* __restrict__ src_index,
                                penalty_token* __restrict__ lists, std::int32_t* __restrict__ lens,
                                const std::int32_t* __restrict__ list_index, std::int32_t stride) {
  __shared__ std::int32_t found;
  const std::int32_t i = static_cast<std::int32_t>(blockIdx.x);
  const std::int64_t l = list_index[i];
  const auto token = static_cast<std::uint32_t>(tokens[src_index[i]]);
  penalty_token* list = lists + l * stride;
  std::int32_t len = lens[l];
  len = len < 0 ? 0 : (len > stride ? stride : len);
  if (threadIdx.x == 0) found = stride;
  __syncthreads();
  for (std::int32_t j = static_cast<std::int32_t>(threadIdx.x); j < len; j += count_threads) {
    if (list[j].token == token) atomicMin(&found, j);
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  if (found < len) {
    ++list[found].output_count;
  } else if (len < stride) {
    list[len].token = token;
    list[len].output_count = 1;
    list[len].in_prompt = 0;
    lens[l] = len + 1;
  }
}

}  // namespace

cudaError_t launch_count_penalty_tokens(const std::int32_t* tokens, const std::int32_t* src_index,
                                        penalty_token* lists, std::int32_t* lens,
                                        const std::int32_t* list_index, std::int32_t stride,
                                        std::int32_t n, cudaStream_t stream) {
  if (n < 0 || stride < 1) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!tokens || !src_index || !lists || !lens || !list_index) return cudaErrorInvalidValue;
  detail::launch_kernel(count_penalty_tokens_kernel, static_cast<unsigned>(n), count_threads, 0,
                        stream, tokens, src_index, lists, lens, list_index, stride);
  return cudaGetLastError();
}

}  // namespace courier::gpu::cuda
