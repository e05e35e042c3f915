// The fused q/k norm + RoPE + KV write kernel (elementwise_qkv.cu) against the sim backend's
// qkv_rope_kv_write on random bf16 inputs: GQA head counts, with and without q/k norm, random
// positions, distinct slots and padding tokens (slot -1), and head sizes that take each vector
// width. The cases and the sim's reference are built before asking for a GPU; the launcher's
// argument checks run everywhere.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "gpu/cuda/cuda_check.hpp"
#include "gpu/cuda/kernels/elementwise.hpp"
#include "gpu/device.hpp"
#include "tests/gpu/cuda/kernel_test_support.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_cuda_elementwise_qkv {

namespace {

using namespace courier::test::kernels;

constexpr std::int32_t kNumBlocks = 8, kBlockSize = 16;

struct shape {
  std::int64_t t;
  std::int32_t nq, nk, hd;
  bool norm;
};

struct case_data {
  shape s;
  std::vector<float> qkv, q_norm, k_norm, inv_freq, k_cache, v_cache;
  std::vector<std::int32_t> positions, slots;
  std::vector<float> want_q, want_k, want_v;  // the sim's results
};

// Random inputs of shape s, and what the sim's op makes of them.
case_data make_case(gpu::device& sim, const shape& s, std::uint32_t seed) {
  const std::int64_t width = s.nk * s.hd, cache_n = kNumBlocks * kBlockSize * width;
  case_data c;
  c.s = s;
  c.qkv = random_values(s.t * (s.nq + 2 * s.nk) * s.hd, -3, 3, seed);
  if (s.norm) {
    c.q_norm = random_values(s.hd, 0.5f, 1.5f, seed + 1);
    c.k_norm = random_values(s.hd, 0.5f, 1.5f, seed + 2);
  }
  for (std::int32_t i = 0; i < s.hd / 2; ++i) {
    c.inv_freq.push_back(static_cast<float>(1.0 / std::pow(1e6, 2.0 * i / s.hd)));
  }
  c.k_cache = random_values(cache_n, -1, 1, seed + 3);
  c.v_cache = random_values(cache_n, -1, 1, seed + 4);
  c.positions = random_ints(s.t, 0, 32767, seed + 5);
  c.slots.resize(kNumBlocks * kBlockSize);
  std::iota(c.slots.begin(), c.slots.end(), 0);
  std::shuffle(c.slots.begin(), c.slots.end(), std::mt19937(seed + 6));
  c.slots.resize(s.t);  // distinct slots; every third token is padding
  for (std::int64_t t = 1; t < s.t; t += 3) c.slots[t] = -1;

  sim_tensor qkv = sim_put(sim, c.qkv, s.t, (s.nq + 2 * s.nk) * s.hd);
  sim_tensor qn = sim_put(sim, s.norm ? c.q_norm : std::vector<float>(1), 1, s.hd);
  sim_tensor kn = sim_put(sim, s.norm ? c.k_norm : std::vector<float>(1), 1, s.hd);
  sim_tensor kc = sim_put(sim, c.k_cache, kNumBlocks * kBlockSize, width);
  sim_tensor vc = sim_put(sim, c.v_cache, kNumBlocks * kBlockSize, width);
  sim_tensor q = sim_put(sim, std::vector<float>(s.t * s.nq * s.hd), s.t, s.nq * s.hd);
  gpu::device_buffer pos = sim_put_raw(sim, c.positions), freq = sim_put_raw(sim, c.inv_freq);
  gpu::device_buffer slots = sim_put_raw(sim, c.slots);
  const gpu::kv_cache_view cache{
      kc.buf.data(), vc.buf.data(), gpu::dtype::f32, kNumBlocks, kBlockSize, s.nk, s.hd};
  const gpu::tensor_view none{};
  sim.qkv_rope_kv_write(
      qkv.view, s.nq, s.nk, s.hd, s.norm ? qn.view : none, s.norm ? kn.view : none, 1e-6f,
      static_cast<const std::int32_t*>(pos.data()), static_cast<const float*>(freq.data()),
      static_cast<const std::int32_t*>(slots.data()), cache, q.view);
  c.want_q = sim_get(sim, q);
  c.want_k = sim_get(sim, kc);
  c.want_v = sim_get(sim, vc);
  return c;
}

struct cuda_run {
  bits q, k_cache, v_cache;
};

// The kernel on tokens [first, first + n) of c.
cuda_run run_cuda(const case_data& c, std::int64_t first, std::int64_t n) {
  const shape& s = c.s;
  const std::int64_t row = (s.nq + 2 * s.nk) * s.hd;
  const bits all = to_bf16(c.qkv);
  cuda_buffer qkv = cuda_put(bits(all.begin() + first * row, all.begin() + (first + n) * row));
  cuda_buffer qn = cuda_put(to_bf16(c.q_norm)), kn = cuda_put(to_bf16(c.k_norm));
  cuda_buffer kc = cuda_put(to_bf16(c.k_cache)), vc = cuda_put(to_bf16(c.v_cache));
  cuda_buffer q = cuda_put(bits(n * s.nq * s.hd));
  cuda_buffer pos = cuda_put(
      std::vector<std::int32_t>(c.positions.begin() + first, c.positions.begin() + first + n));
  cuda_buffer slots =
      cuda_put(std::vector<std::int32_t>(c.slots.begin() + first, c.slots.begin() + first + n));
  cuda_buffer freq = cuda_put(c.inv_freq);
  const gpu::kv_cache_view cache{kc.get(), vc.get(), gpu::dtype::bf16, kNumBlocks, kBlockSize,
                                 s.nk,     s.hd};
  CUDA_CHECK(cuda::launch_qkv_rope_kv_write(
      qkv.get(), n, s.nq, s.nk, s.hd, s.norm ? qn.get() : nullptr, s.norm ? kn.get() : nullptr,
      1e-6f, static_cast<const std::int32_t*>(pos.get()), static_cast<const float*>(freq.get()),
      static_cast<const std::int32_t*>(slots.get()), cache, q.get(), nullptr));
  return {cuda_get<std::uint16_t>(q, static_cast<std::size_t>(n * s.nq * s.hd)),
          cuda_get<std::uint16_t>(kc, c.k_cache.size()),
          cuda_get<std::uint16_t>(vc, c.v_cache.size())};
}

}  // namespace

TEST_CASE("cuda qkv_rope_kv_write normalises, rotates and stores q, k and v like the sim op",
          "[gpu]") {
  auto sim = gpu::make_sim_device(1, 64);
  // head_dim 64 and 128 take 8-wide vectors; 36 (half 18) 2-wide for both the norm and the pairs;
  // 40 (half 20) 8-wide for the norm and 2-wide for the pairs; 6 (half 3) single pairs.
  const std::vector<shape> shapes = {
      {1, 14, 2, 64, false}, {7, 16, 8, 128, true}, {33, 14, 2, 64, true}, {7, 32, 8, 128, false},
      {7, 3, 1, 36, true},   {5, 4, 2, 40, true},   {3, 2, 1, 6, false},   {4, 2, 1, 6, true}};
  std::vector<case_data> cases;
  std::uint32_t seed = 30;
  for (const shape& s : shapes) cases.push_back(make_case(*sim, s, seed += 10));
  if (!cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  for (const case_data& c : cases) {
    INFO("T=" << c.s.t << " nq=" << c.s.nq << " nk=" << c.s.nk << " head_dim=" << c.s.hd
              << (c.s.norm ? " with q/k norm" : ""));
    const cuda_run got = run_cuda(c, 0, c.s.t);
    require_close(got.q, c.want_q, 1e-2f);
    // The whole cache: written slots, and those of padding tokens and of no token untouched.
    require_close(got.k_cache, c.want_k, 1e-2f);
    require_same_bf16(got.v_cache, c.want_v);
    // The last token alone gives the same bits as in the batch.
    const std::int64_t last = c.s.t - 1, width = c.s.nq * c.s.hd;
    const cuda_run one = run_cuda(c, last, 1);
    REQUIRE(one.q == bits(got.q.begin() + last * width, got.q.end()));
    if (c.slots[last] >= 0) {
      const std::int64_t kv = c.s.nk * c.s.hd, at = c.slots[last] * kv;
      REQUIRE(bits(one.k_cache.begin() + at, one.k_cache.begin() + at + kv) ==
              bits(got.k_cache.begin() + at, got.k_cache.begin() + at + kv));
    }
  }
}

TEST_CASE("cuda qkv_rope_kv_write refuses impossible arguments and launches nothing for no tokens",
          "[cuda]") {
  gpu::kv_cache_view cache{nullptr, nullptr, gpu::dtype::bf16, 1, 16, 2, 64};
  void* p = reinterpret_cast<void*>(std::uintptr_t{256});  // never dereferenced: refused first
  const auto* ip = static_cast<const std::int32_t*>(p);
  const auto* fp = static_cast<const float*>(p);
  auto launch = [&](std::int64_t t, std::int32_t nk, std::int32_t hd,
                    const gpu::kv_cache_view& kv) {
    return cuda::launch_qkv_rope_kv_write(p, t, 4, nk, hd, nullptr, nullptr, 1e-6f, ip, fp, ip, kv,
                                          p, nullptr);
  };
  CHECK(launch(0, 2, 64, cache) == cudaSuccess);
  CHECK(launch(-1, 2, 64, cache) == cudaErrorInvalidValue);
  CHECK(launch(1, 2, 63, cache) == cudaErrorInvalidValue);   // odd head_dim
  CHECK(launch(1, 2, 514, cache) == cudaErrorInvalidValue);  // beyond 512
  CHECK(launch(1, 3, 64, cache) == cudaErrorInvalidValue);   // the cache has 2 kv heads
  gpu::kv_cache_view f32 = cache;
  f32.type = gpu::dtype::f32;
  CHECK(launch(1, 2, 64, f32) == cudaErrorInvalidValue);
  CHECK(launch(1, 2, 64, cache) == cudaErrorInvalidValue);  // no cache memory
}

}  // namespace courier_test_gpu_cuda_elementwise_qkv
