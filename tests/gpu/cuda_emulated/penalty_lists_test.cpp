// gpu/cuda's count_penalty_tokens kernel on the CUDA emulator, against its contract in
// penalty_lists.hpp: a token already in its list counts once more, a new one is appended as
// {t, 1, 0}, a full list stays as it is, and a length outside [0, stride] is read clamped.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "gpu/cuda/kernels/penalty_lists.hpp"

// This file's own namespace, as every test file's.
namespace courier_test_gpu_cuda_emulated_penalty_lists {

using namespace courier;
using gpu::penalty_token;

TEST_CASE("emulated cuda: count_penalty_tokens counts, appends, and leaves a full list",
          "[emulated]") {
  constexpr std::int32_t stride = 4;
  // List 0 holds 7 (count 2) and 9; list 1 is full; list 2 is empty; list 3 claims 9 entries.
  std::vector<penalty_token> lists(4 * stride);
  lists[0] = {7, 2, 1};
  lists[1] = {9, 1, 0};
  for (std::int32_t j = 0; j < stride; ++j) lists[stride + j] = {100u + j, 1, 0};
  lists[3 * stride + 3] = {5, 4, 0};
  std::vector<std::int32_t> lens = {2, stride, 0, 9};
  // Row i counts tokens[src_index[i]] into list list_index[i].
  const std::vector<std::int32_t> tokens = {9, 7, 55, 66, 5};
  const std::vector<std::int32_t> src_index = {1, 2, 3, 4};   // 7, 55, 66, 5
  const std::vector<std::int32_t> list_index = {0, 1, 2, 3};
  REQUIRE(gpu::cuda::launch_count_penalty_tokens(tokens.data(), src_index.data(), lists.data(),
                                                 lens.data(), list_index.data(), stride, 4,
                                                 nullptr) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(lists[0].output_count == 3);  // 7 counted once more
  CHECK(lists[0].in_prompt == 1);
  CHECK(lists[1].output_count == 1);
  CHECK(lens[0] == 2);
  for (std::int32_t j = 0; j < stride; ++j) CHECK(lists[stride + j].token == 100u + j);  // full
  CHECK(lens[1] == stride);
  CHECK(lists[2 * stride].token == 66u);  // appended
  CHECK(lists[2 * stride].output_count == 1);
  CHECK(lists[2 * stride].in_prompt == 0);
  CHECK(lens[2] == 1);
  CHECK(lists[3 * stride + 3].output_count == 5);  // length 9 read as 4: found at index 3
  CHECK(gpu::cuda::launch_count_penalty_tokens(tokens.data(), src_index.data(), lists.data(),
                                               lens.data(), list_index.data(), 0, 4, nullptr) ==
        cudaErrorInvalidValue);
}

}  // namespace courier_test_gpu_cuda_emulated_penalty_lists
