// LoRA on the CUDA backend (device::lora_apply through the kernels of gpu/cuda/kernels/lora)
// against the sim's op (gpu/sim/sim_lora.cpp) on the same bf16-rounded inputs: 1, 2 and 3 parts
// of uneven widths, ranks 8 and 16, K = 64 and 4096 (a long reduction), plus rank 5 with
// K = 100 (the scalar loads), in a pool of 3 adapters, for batches of 1, 7 and 300 tokens mixing
// slots -1, 0, 1 and 2. Tokens of slot -1 keep their out row bit for bit, and a token's row is
// the same bits alone as in the batch of 300. The sim's answers are computed on every machine;
// the GPU's only where one is present.
#include "gpu/cuda/kernels/lora.hpp"

#include <cuda_runtime_api.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "gpu/cuda/cuda_check.hpp"
#include "gpu/cuda/cuda_device.hpp"
#include "gpu/device.hpp"
#include "gpu/dtype.hpp"
#include "gpu/tensor.hpp"
#include "tests/gpu/cuda/kernel_test_support.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_cuda_lora_test {

namespace {

using namespace courier::test::kernels;

constexpr std::int32_t pool = 3;     // adapter slots
constexpr std::int64_t batch = 300;  // tokens of the largest batch

struct lora_case {
  std::int32_t parts = 1, rank = 8;
  std::int64_t K = 64;
  std::vector<std::int64_t> widths;  // columns of each part
  std::int64_t N() const {
    std::int64_t n = 0;
    for (std::int64_t w : widths) n += w;
    return n;
  }
  std::int64_t ld_tmp() const { return parts * rank + 3; }  // wider than needed: a row stride
};

// A case's pool of adapters and its 300 tokens, every value rounded to bf16. Magnitudes: u = A x
// about 0.7 (a scaled by 1 / sqrt(K)), B u about 0.3, out about 0.6: the adapter's change is a
// good part of each output, so a wrong slot, part or row shows far beyond the tolerance.
struct inputs {
  lora_case c;
  std::vector<float> a, b, x, out;
  std::vector<std::int32_t> slots;
};

inputs make_inputs(const lora_case& c, std::uint32_t seed) {
  inputs in;
  in.c = c;
  const std::int64_t rows = c.parts * c.rank, N = c.N();
  const float a_scale = 2.0f / std::sqrt(static_cast<float>(c.K));
  in.a = random_values(pool * rows * c.K, -a_scale, a_scale, seed);
  in.b = random_values(pool * N * c.rank, -0.25f, 0.25f, seed + 1);
  in.x = random_values(batch * c.K, -1, 1, seed + 2);
  in.out = random_values(batch * N, -1, 1, seed + 3);
  in.slots = random_ints(batch, -1, pool - 1, seed + 4);
  // The 7-token batch is the first 7: every slot, and -1 between them.
  const std::int32_t first[7] = {1, -1, 0, 2, 2, -1, 0};
  for (int i = 0; i < 7; ++i) in.slots[i] = first[i];
  return in;
}

// The rows `tokens` of a [batch, cols] matrix.
template <class T>
std::vector<T> gather(const std::vector<T>& m, std::int64_t cols,
                      const std::vector<std::int64_t>& tokens) {
  std::vector<T> g;
  for (std::int64_t t : tokens) g.insert(g.end(), m.begin() + t * cols, m.begin() + (t + 1) * cols);
  return g;
}

gpu::lora_weights weights_of(const lora_case& c, gpu::tensor_view a, gpu::tensor_view b) {
  gpu::lora_weights w;
  w.a = a;
  w.b = b;
  w.slots = pool;
  w.parts = c.parts;
  w.rank = c.rank;
  std::int64_t end = 0;
  for (std::int32_t p = 0; p < c.parts; ++p) w.part_end[p] = end += c.widths[p];
  return w;
}

// The sim's out rows (f32) for the tokens `tokens` of the case, run as one batch.
std::vector<float> run_sim(gpu::device& sim, const inputs& in,
                           const std::vector<std::int64_t>& tokens) {
  const lora_case& c = in.c;
  const std::int64_t T = static_cast<std::int64_t>(tokens.size()), N = c.N();
  const sim_tensor a = sim_put(sim, in.a, pool * c.parts * c.rank, c.K),
                   b = sim_put(sim, in.b, pool * N, c.rank),
                   x = sim_put(sim, gather(in.x, c.K, tokens), T, c.K),
                   out = sim_put(sim, gather(in.out, N, tokens), T, N),
                   tmp = sim_put(sim, std::vector<float>(T * c.ld_tmp()), T, c.ld_tmp());
  const gpu::device_buffer slots = sim_put_raw(sim, gather(in.slots, 1, tokens));
  sim.lora_apply(x.view, weights_of(c, a.view, b.view),
                 static_cast<const std::int32_t*>(slots.data()), tmp.view, out.view);
  return sim_get(sim, out);
}

template <class T>
gpu::device_buffer put(gpu::device& d, const std::vector<T>& v) {
  gpu::device_buffer buf = d.allocate(v.size() * sizeof(T));
  d.upload(buf.data(), v.data(), v.size() * sizeof(T));
  return buf;
}

// The CUDA device's out rows (bf16 bits) for the tokens `tokens` run as one batch, with their
// slots replaced by `slots` when it is not empty.
bits run_cuda(gpu::device& dev, const inputs& in, const std::vector<std::int64_t>& tokens,
              std::vector<std::int32_t> slots = {}) {
  const lora_case& c = in.c;
  const std::int64_t T = static_cast<std::int64_t>(tokens.size()), N = c.N();
  if (slots.empty()) slots = gather(in.slots, 1, tokens);
  const gpu::device_buffer a = put(dev, to_bf16(in.a)), b = put(dev, to_bf16(in.b)),
                           x = put(dev, to_bf16(gather(in.x, c.K, tokens))),
                           out = put(dev, to_bf16(gather(in.out, N, tokens))),
                           tmp = dev.allocate(static_cast<std::size_t>(T * c.ld_tmp()) * 4),
                           s = put(dev, slots);
  const gpu::lora_weights w = weights_of(c, a.view(gpu::dtype::bf16, pool * c.parts * c.rank, c.K),
                                         b.view(gpu::dtype::bf16, pool * N, c.rank));
  dev.lora_apply(x.view(gpu::dtype::bf16, T, c.K), w, static_cast<const std::int32_t*>(s.data()),
                 tmp.view(gpu::dtype::f32, T, c.ld_tmp()), out.view(gpu::dtype::bf16, T, N));
  bits got(static_cast<std::size_t>(T * N));
  dev.download(got.data(), out.data(), got.size() * sizeof(std::uint16_t));
  return got;
}

std::vector<lora_case> cases() {
  std::vector<lora_case> all;
  // Widths off the 128-column tiles of the expand kernel: part boundaries inside a tile.
  const std::vector<std::vector<std::int64_t>> widths = {{136}, {130, 70}, {96, 40, 72}};
  for (std::int32_t parts = 1; parts <= 3; ++parts) {
    for (std::int32_t rank : {8, 16}) {
      for (std::int64_t K : {64, 4096}) all.push_back({parts, rank, K, widths[parts - 1]});
    }
  }
  all.push_back({2, 5, 100, {24, 40}});  // neither K nor rank a multiple of 8: scalar loads
  return all;
}

}  // namespace

TEST_CASE(
    "cuda lora_apply matches the sim; slot -1 rows stay as they were; a token's row is the "
    "same alone as in a batch of 300",
    "[gpu]") {
  auto sim = gpu::make_sim_device(4, 256);
  std::unique_ptr<gpu::device> dev;
  if (gpu::cuda::has_device()) {
    dev = gpu::cuda::make_cuda_device(0);
  } else {
    WARN("no GPU: the sim's side only");
  }
  std::uint32_t seed = 100;
  for (const lora_case& c : cases()) {
    INFO("parts " << c.parts << ", rank " << c.rank << ", K " << c.K << ", N " << c.N());
    const inputs in = make_inputs(c, seed += 10);
    const std::int64_t N = c.N();
    std::vector<std::int64_t> all(batch), first7 = {0, 1, 2, 3, 4, 5, 6};
    for (std::int64_t t = 0; t < batch; ++t) all[t] = t;
    // Alone: the first token of each slot (and of -1) after the first 7.
    std::vector<std::int64_t> alone;
    for (std::int32_t slot = -1; slot < pool; ++slot) {
      for (std::int64_t t = 7; t < batch; ++t) {
        if (in.slots[t] == slot) {
          alone.push_back(t);
          break;
        }
      }
    }
    REQUIRE(alone.size() == static_cast<std::size_t>(pool) + 1);
    const std::vector<std::vector<std::int64_t>> batches = {all,        first7,     {alone[0]},
                                                            {alone[1]}, {alone[2]}, {alone[3]}};
    std::vector<std::vector<float>> want;
    for (const auto& tokens : batches) want.push_back(run_sim(*sim, in, tokens));
    if (!dev) continue;

    std::vector<bits> got;
    for (std::size_t i = 0; i < batches.size(); ++i) {
      INFO(batches[i].size() << " tokens");
      got.push_back(run_cuda(*dev, in, batches[i]));
      // bf16 output: rounding the f32 result costs up to 2^-9 of its magnitude (~0.002); the f32
      // sums differ from the sim's only in their order (~1e-6). 1e-2 of max(1, |want|) leaves
      // room for both and is well below what a wrong slot, part or row changes (~0.1 and more).
      require_close(got[i], want[i], 1e-2f);
      // Slot -1: the input row, bit for bit.
      const bits before = to_bf16(gather(in.out, N, batches[i]));
      for (std::size_t r = 0; r < batches[i].size(); ++r) {
        if (in.slots[batches[i][r]] >= 0) continue;
        INFO("token " << batches[i][r] << " (slot -1)");
        CHECK(bits(got[i].begin() + r * N, got[i].begin() + (r + 1) * N) ==
              bits(before.begin() + r * N, before.begin() + (r + 1) * N));
      }
    }
    // Alone and within the batches: the same bits (the 7 are the batch's first 7 rows).
    for (std::size_t i = 0; i < alone.size(); ++i) {
      INFO("token " << alone[i] << " of slot " << in.slots[alone[i]]);
      CHECK(got[2 + i] == bits(got[0].begin() + alone[i] * N, got[0].begin() + (alone[i] + 1) * N));
    }
    CHECK(got[1] == bits(got[0].begin(), got[0].begin() + 7 * N));
    // Slots past the pool are skipped like -1 (the device cannot refuse them: they are device
    // memory), never read out of bounds.
    std::vector<std::int32_t> outside = gather(in.slots, 1, first7);
    outside[1] = pool;
    outside[5] = std::numeric_limits<std::int32_t>::max();
    CHECK(run_cuda(*dev, in, first7, outside) == got[1]);
  }
}

TEST_CASE("cuda lora_apply refuses wrong dtypes and shapes", "[gpu]") {
  if (!gpu::cuda::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  auto dev = gpu::cuda::make_cuda_device(0);
  const lora_case c{2, 4, 16, {8, 8}};
  std::vector<gpu::device_buffer> bufs;
  const auto zeros = [&](gpu::dtype type, std::int64_t rows, std::int64_t cols) {
    bufs.push_back(dev->allocate(static_cast<std::size_t>(rows * cols) * 4));
    dev->fill_zero(bufs.back().data(), bufs.back().size_bytes());
    return bufs.back().view(type, rows, cols);
  };
  const auto bf = [&](std::int64_t rows, std::int64_t cols) {
    return zeros(gpu::dtype::bf16, rows, cols);
  };
  const gpu::tensor_view x = bf(3, 16), out = bf(3, 16), tmp = zeros(gpu::dtype::f32, 3, 8);
  const gpu::lora_weights w = weights_of(c, bf(pool * 8, 16), bf(pool * 16, 4));
  const auto* slots = static_cast<const std::int32_t*>(zeros(gpu::dtype::i32, 1, 3).data);
  dev->lora_apply(x, w, slots, tmp, out);  // the shapes agree
  dev->synchronize();
  CHECK_THROWS_AS(dev->lora_apply(zeros(gpu::dtype::f32, 3, 16), w, slots, tmp, out),
                  std::invalid_argument);
  CHECK_THROWS_AS(dev->lora_apply(x, w, slots, bf(3, 8), out), std::invalid_argument);
  CHECK_THROWS_AS(dev->lora_apply(x, w, slots, zeros(gpu::dtype::f32, 3, 7), out),
                  std::invalid_argument);  // tmp narrower than parts * rank
  CHECK_THROWS_AS(dev->lora_apply(bf(3, 15), w, slots, tmp, out), std::invalid_argument);
  CHECK_THROWS_AS(dev->lora_apply(x, w, slots, tmp, bf(3, 17)), std::invalid_argument);
  gpu::lora_weights bad = w;
  bad.parts = 4;
  CHECK_THROWS_AS(dev->lora_apply(x, bad, slots, tmp, out), std::invalid_argument);
  bad = w;
  bad.part_end[1] = 15;
  CHECK_THROWS_AS(dev->lora_apply(x, bad, slots, tmp, out), std::invalid_argument);
}

TEST_CASE("cuda lora launchers refuse impossible arguments and launch nothing for no work",
          "[cuda]") {
  // Host-side only: the launchers decide these before enqueueing anything.
  namespace cu = courier::gpu::cuda;
  alignas(16) static float dummy[64];
  const std::int32_t* slots = reinterpret_cast<const std::int32_t*>(dummy);
  const std::int64_t ends[3] = {16, 32, 48};
  CHECK(cu::launch_lora_shrink(dummy, 2, 16, dummy, slots, 3, 0, 8, dummy, 8, nullptr) ==
        cudaErrorInvalidValue);  // parts 0
  CHECK(cu::launch_lora_shrink(dummy, 2, 16, dummy, slots, 3, 4, 8, dummy, 32, nullptr) ==
        cudaErrorInvalidValue);  // parts 4
  CHECK(cu::launch_lora_shrink(dummy, 2, 16, dummy, slots, 3, 1, 0, dummy, 8, nullptr) ==
        cudaErrorInvalidValue);  // rank 0
  CHECK(cu::launch_lora_shrink(dummy, 2, 16, dummy, slots, 0, 1, 8, dummy, 8, nullptr) ==
        cudaErrorInvalidValue);  // an empty pool
  CHECK(cu::launch_lora_shrink(dummy, 2, 16, dummy, slots, 3, 2, 8, dummy, 15, nullptr) ==
        cudaErrorInvalidValue);  // tmp rows narrower than parts * rank
  CHECK(cu::launch_lora_shrink(nullptr, 2, 16, dummy, slots, 3, 1, 8, dummy, 8, nullptr) ==
        cudaErrorInvalidValue);
  CHECK(cu::launch_lora_shrink(dummy, 2, 16, dummy, nullptr, 3, 1, 8, dummy, 8, nullptr) ==
        cudaErrorInvalidValue);
  CHECK(cu::launch_lora_shrink(nullptr, 0, 16, nullptr, nullptr, 3, 1, 8, nullptr, 8, nullptr) ==
        cudaSuccess);  // no tokens
  CHECK(cu::launch_lora_expand(dummy, 16, 2, dummy, slots, 3, 3, 0, ends, 48, dummy, nullptr) ==
        cudaErrorInvalidValue);  // rank 0
  CHECK(cu::launch_lora_expand(dummy, 16, 2, dummy, slots, 3, 2, 8, ends, 48, dummy, nullptr) ==
        cudaErrorInvalidValue);  // the last part ends at 32, not N
  CHECK(cu::launch_lora_expand(dummy, 16, 2, dummy, slots, 3, 3, 4, nullptr, 48, dummy,
                               nullptr) == cudaErrorInvalidValue);  // no part ends
  CHECK(cu::launch_lora_expand(dummy, 16, 2, dummy, slots, 3, 3, 4, ends, 48, nullptr, nullptr) ==
        cudaErrorInvalidValue);  // no out
  CHECK(cu::launch_lora_expand(nullptr, 16, 0, nullptr, nullptr, 3, 3, 4, ends, 48, nullptr,
                               nullptr) == cudaSuccess);  // no tokens
}

}  // namespace courier_test_gpu_cuda_lora_test
