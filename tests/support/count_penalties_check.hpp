#pragma once
// device::count_penalty_tokens against values worked out by hand from its contract, on any
// device (the sim's test and the CUDA one share it).
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "gpu/device.hpp"

namespace courier::test {

inline void check_count_penalty_tokens(gpu::device& dev) {
  auto put = [&dev](const auto& v) {
    gpu::device_buffer b = dev.allocate(v.size() * sizeof(v[0]));
    dev.upload(b.data(), v.data(), v.size() * sizeof(v[0]));
    return b;
  };
  constexpr std::int32_t stride = 4;
  // List 0: {5 in the prompt, 9 twice in the output}; list 1 full; list 2 empty.
  std::vector<gpu::penalty_token> lists = {
      {5, 0, 1}, {9, 2, 0}, {0, 0, 0}, {0, 0, 0},   //
      {1, 1, 0}, {2, 1, 0}, {3, 1, 0}, {4, 1, 0},   //
      {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  std::vector<std::int32_t> lens = {2, 4, 0};
  gpu::device_buffer l = put(lists), n = put(lens);
  auto* lp = static_cast<gpu::penalty_token*>(l.data());
  auto* np = static_cast<std::int32_t*>(n.data());
  // Sampled tokens at indices 0..3; rows i take sampled[src[i]] into list list_index[i].
  gpu::device_buffer tokens = put(std::vector<std::int32_t>{9, 7, 6, 5});
  gpu::device_buffer src = put(std::vector<std::int32_t>{0, 1, 2});
  gpu::device_buffer dst = put(std::vector<std::int32_t>{0, 2, 1});
  dev.count_penalty_tokens(static_cast<const std::int32_t*>(tokens.data()),
                            static_cast<const std::int32_t*>(src.data()), lp, np,
                            static_cast<const std::int32_t*>(dst.data()), stride, 3);
  // Then 5 (in the prompt, not yet in the output) into list 0, and 7 again into list 2.
  gpu::device_buffer src2 = put(std::vector<std::int32_t>{3, 1});
  gpu::device_buffer dst2 = put(std::vector<std::int32_t>{0, 2});
  dev.count_penalty_tokens(static_cast<const std::int32_t*>(tokens.data()),
                            static_cast<const std::int32_t*>(src2.data()), lp, np,
                            static_cast<const std::int32_t*>(dst2.data()), stride, 2);
  std::vector<gpu::penalty_token> got(lists.size());
  std::vector<std::int32_t> got_lens(3);
  dev.download(got.data(), l.data(), got.size() * sizeof(gpu::penalty_token));
  dev.download(got_lens.data(), n.data(), got_lens.size() * sizeof(std::int32_t));
  CHECK(got_lens == std::vector<std::int32_t>{2, 4, 1});
  auto same = [](const gpu::penalty_token& a, const gpu::penalty_token& b) {
    return a.token == b.token && a.output_count == b.output_count && a.in_prompt == b.in_prompt;
  };
  CHECK(same(got[0], {5, 1, 1}));
  CHECK(same(got[1], {9, 3, 0}));
  for (int j = 0; j < 4; ++j) CHECK(same(got[4 + j], lists[4 + j]));  // full: 6 not added
  CHECK(same(got[8], {7, 2, 0}));
}

}  // namespace courier::test
