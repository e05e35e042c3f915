// gpu/cuda's attention kernels on the CUDA emulator, against softmax(scale Q K^T) V computed
// naively in double: the check of the kernel's emulated PTX (mma.sync m16n8k16 fragments,
// ldmatrix .trans, cp.async groups, ex2) end to end. A wrong register of any fragment mixes
// rows, keys or dimensions, an error of the size of the outputs themselves; what the kernel
// rounds (P and the output to bf16) stays within a few thousandths of max |V|. One batch per
// head_dim (32, 64, 96, 128): GQA 4/2, pages of 16 in a shuffled block table, a decode-like
// sequence of 600 keys (two chunks, a partial last tile) and a causal prefill of 40; run without
// and with split-K.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gpu/cuda/kernels/attention.hpp"
#include "gpu/dtype.hpp"
#include "gpu/tensor.hpp"

// This file's own namespace, as every test file's.
namespace courier_test_gpu_cuda_emulated_attention {

using namespace courier;

constexpr int kQHeads = 4, kKvHeads = 2, kBlockSize = 16, kMaxBlocks = 40;
constexpr int kNumBlocks = 2 * kMaxBlocks;
constexpr float kScale = 0.5f;  // peaked rows: a mapping error cannot average away

// Host memory standing in for device memory, 16-byte aligned as the launch requires.
struct alignas(16) words16 {
  unsigned char b[16];
};
template <class T>
struct buffer {
  explicit buffer(std::size_t n) : store((n * sizeof(T) + 15) / 16 + 1), size(n) {}
  T* data() { return reinterpret_cast<T*>(store.data()); }
  T& operator[](std::size_t i) { return data()[i]; }
  std::vector<words16> store;
  std::size_t size;
};

struct batch_data {
  int head_dim;
  std::vector<std::int32_t> token_seq, positions, block_tables;  // tables [2, kMaxBlocks]
  buffer<std::uint16_t> q{0}, k{0}, v{0};
};

// Sequence 0: tokens at positions 597..599 (600 keys); sequence 1: positions 0..39. Blocks are
// handed out in a shuffled order, so a wrong page or slot reads other keys.
batch_data make_batch(int head_dim) {
  batch_data b;
  b.head_dim = head_dim;
  for (int p = 597; p < 600; ++p) b.token_seq.push_back(0), b.positions.push_back(p);
  for (int p = 0; p < 40; ++p) b.token_seq.push_back(1), b.positions.push_back(p);
  std::vector<std::int32_t> pages(kNumBlocks);
  for (int i = 0; i < kNumBlocks; ++i) pages[static_cast<std::size_t>(i)] = i;
  std::mt19937 rng(7);
  std::shuffle(pages.begin(), pages.end(), rng);
  b.block_tables = pages;
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto fill = [&](buffer<std::uint16_t>& x, std::size_t n) {
    x = buffer<std::uint16_t>(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = gpu::f32_to_bf16(u(rng));
  };
  fill(b.q, b.positions.size() * kQHeads * static_cast<std::size_t>(head_dim));
  const std::size_t cache = std::size_t{kNumBlocks} * kBlockSize * kKvHeads * head_dim;
  fill(b.k, cache);
  fill(b.v, cache);
  return b;
}

// The naive attention of token t, query head h, in double over the bf16 inputs.
std::vector<double> reference(batch_data& b, std::size_t t, int h) {
  const int kvh = h / (kQHeads / kKvHeads);
  const int pos = b.positions[t], hd = b.head_dim;
  const std::int32_t* table =
      &b.block_tables[static_cast<std::size_t>(b.token_seq[t]) * kMaxBlocks];
  auto at = [&](buffer<std::uint16_t>& x, int j, int d) {
    const std::size_t slot = std::size_t(table[j / kBlockSize]) * kBlockSize + j % kBlockSize;
    return static_cast<double>(gpu::bf16_to_f32(x[(slot * kKvHeads + kvh) * hd + d]));
  };
  std::vector<double> s(static_cast<std::size_t>(pos) + 1);
  double mx = -INFINITY;
  for (int j = 0; j <= pos; ++j) {
    double dot = 0;
    for (int d = 0; d < hd; ++d) {
      dot += gpu::bf16_to_f32(b.q[(t * kQHeads + h) * hd + d]) * at(b.k, j, d);
    }
    s[static_cast<std::size_t>(j)] = dot * kScale;
    mx = std::max(mx, dot * kScale);
  }
  std::vector<double> o(static_cast<std::size_t>(hd), 0.0);
  double l = 0;
  for (int j = 0; j <= pos; ++j) {
    const double p = std::exp(s[static_cast<std::size_t>(j)] - mx);
    l += p;
    for (int d = 0; d < hd; ++d) o[static_cast<std::size_t>(d)] += p * at(b.v, j, d);
  }
  for (double& x : o) x /= l;
  return o;
}

// Runs the plan's kernels on the legacy stream; returns the largest error over every output
// against the reference's allowance (<= 1 passes).
double run_and_compare(batch_data& b, std::int32_t num_sms, std::int32_t* splits) {
  const auto T = static_cast<std::int32_t>(b.positions.size());
  const int hd = b.head_dim;
  gpu::cuda::attention_sizes sizes{T, 2, 600, kQHeads, kKvHeads, hd, num_sms};
  const gpu::cuda::attention_plan plan = gpu::cuda::plan_attention(sizes);
  *splits = plan.num_splits;
  gpu::attention_batch batch;
  batch.token_seq = b.token_seq.data();
  batch.positions = b.positions.data();
  batch.block_tables = b.block_tables.data();
  batch.num_tokens = T;
  batch.num_seqs = 2;
  batch.max_blocks_per_seq = kMaxBlocks;
  batch.block_size = kBlockSize;
  batch.max_kv_len = 600;
  gpu::kv_cache_view cache{b.k.data(), b.v.data(), gpu::dtype::bf16, kNumBlocks, kBlockSize,
                           kKvHeads,   hd};
  buffer<unsigned char> workspace(gpu::cuda::attention_workspace_bytes(plan));
  buffer<std::uint16_t> out(static_cast<std::size_t>(T) * kQHeads * hd);
  REQUIRE(gpu::cuda::launch_attention_plan(plan, batch, workspace.data(), nullptr) == cudaSuccess);
  REQUIRE(gpu::cuda::launch_attention(plan, b.q.data(), cache, batch, kScale, out.data(),
                                      workspace.data(), nullptr) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  double worst = 0;
  for (std::size_t t = 0; t < static_cast<std::size_t>(T); ++t) {
    for (int h = 0; h < kQHeads; ++h) {
      const std::vector<double> ref = reference(b, t, h);
      for (int d = 0; d < hd; ++d) {
        const double got = gpu::bf16_to_f32(out[(t * kQHeads + h) * hd + d]);
        const double r = ref[static_cast<std::size_t>(d)];
        worst = std::max(worst, std::fabs(got - r) / (0.006 + std::fabs(r) / 128));
      }
    }
  }
  return worst;
}

TEST_CASE("emulated cuda: attention equals softmax(QK^T)V in double, unsplit and split-K",
          "[emulated]") {
  const int head_dim = GENERATE(32, 64, 96, 128);
  INFO("head_dim " << head_dim);
  batch_data b = make_batch(head_dim);
  std::int32_t splits = 0;
  CHECK(run_and_compare(b, 1, &splits) <= 1.0);  // two chunks folded in the CTA
  CHECK(splits == 1);
  CHECK(run_and_compare(b, 132, &splits) <= 1.0);  // the chunks' partials, then combine
  CHECK(splits == 2);
}

}  // namespace courier_test_gpu_cuda_emulated_attention
