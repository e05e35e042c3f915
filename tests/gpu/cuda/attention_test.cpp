// The paged attention kernel: its plan on the host, then (on a GPU) its output against the sim
// backend's attention op on the same bf16-exact data, and its batch and plan invariance.
#include "gpu/cuda/kernels/attention.hpp"

#include <cuda_runtime_api.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "gpu/cuda/cuda_check.hpp"
#include "gpu/device.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_cuda_attention {

namespace {

namespace gpu = courier::gpu;
namespace cu = courier::gpu::cuda;

cu::attention_sizes sizes_of(std::int32_t num_tokens, std::int32_t num_seqs,
                             std::int32_t max_kv_len, std::int32_t nq, std::int32_t nk,
                             std::int32_t head_dim, std::int32_t num_sms) {
  cu::attention_sizes s;
  s.num_tokens = num_tokens;
  s.num_seqs = num_seqs;
  s.max_kv_len = max_kv_len;
  s.num_q_heads = nq;
  s.num_kv_heads = nk;
  s.head_dim = head_dim;
  s.num_sms = num_sms;
  return s;
}

std::size_t partial_bytes(const cu::attention_plan& p) {
  return static_cast<std::size_t>(p.sizes.num_tokens) * p.sizes.num_q_heads * p.max_chunks *
         (p.sizes.head_dim + 2) * sizeof(float);
}

// ---- a ragged batch on the host ----

struct seq_spec {
  std::int32_t start;  // first position of this step's tokens; [0, start) are cached already
  std::int32_t count;  // tokens this step
};

struct attention_case {
  std::int32_t nq, nk, head_dim, block_size;
  std::vector<seq_spec> seqs;
  std::vector<int> order;  // sequences in the order their tokens appear in the batch
};

// Everything bf16-exact in f32; KV slots that no sequence has written are NaN.
struct host_batch {
  std::int32_t num_tokens = 0, num_seqs = 0, max_blocks = 0, block_size = 0, num_blocks = 0;
  std::int32_t max_kv_len = 0, nq = 0, nk = 0, head_dim = 0;
  std::vector<std::int32_t> token_seq, positions, slot_mapping, seq_kv_len, block_tables;
  std::vector<int> token_source;  // the sequence each token was made for (its case index)
  std::vector<float> q;           // [T, nq * head_dim]
  std::vector<float> k, v;        // [num_blocks, block_size, nk, head_dim]
};

float bf16_round(float x) {
  return gpu::bf16_to_f32(gpu::f32_to_bf16(x));
}

host_batch make_batch(const attention_case& c, std::uint32_t seed) {
  std::mt19937 rng(seed);
  host_batch b;
  b.nq = c.nq;
  b.nk = c.nk;
  b.head_dim = c.head_dim;
  b.block_size = c.block_size;
  b.num_seqs = static_cast<std::int32_t>(c.seqs.size());
  std::vector<std::int32_t> blocks_of;
  for (const auto& s : c.seqs) {
    const std::int32_t len = s.start + s.count;
    b.seq_kv_len.push_back(len);
    b.max_kv_len = std::max(b.max_kv_len, len);
    blocks_of.push_back((len + c.block_size - 1) / c.block_size);
    b.max_blocks = std::max(b.max_blocks, blocks_of.back() + 2);  // spare entries stay -1
    b.num_blocks += blocks_of.back();
  }
  b.num_blocks += 8;  // blocks no sequence owns
  std::vector<std::int32_t> ids(static_cast<std::size_t>(b.num_blocks));
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);
  b.block_tables.assign(static_cast<std::size_t>(b.num_seqs) * b.max_blocks, -1);
  std::size_t next = 0;
  for (int s = 0; s < b.num_seqs; ++s) {
    for (int i = 0; i < blocks_of[s]; ++i) {
      b.block_tables[static_cast<std::size_t>(s) * b.max_blocks + i] = ids[next++];
    }
  }

  const std::size_t width = static_cast<std::size_t>(c.nk) * c.head_dim;
  const std::size_t slots = static_cast<std::size_t>(b.num_blocks) * c.block_size;
  b.k.assign(slots * width, std::numeric_limits<float>::quiet_NaN());
  b.v.assign(slots * width, std::numeric_limits<float>::quiet_NaN());
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  auto slot_of = [&](int s, std::int32_t pos) {
    return static_cast<std::size_t>(
               b.block_tables[static_cast<std::size_t>(s) * b.max_blocks + pos / c.block_size]) *
               c.block_size +
           static_cast<std::size_t>(pos % c.block_size);
  };
  for (int s = 0; s < b.num_seqs; ++s) {
    for (std::int32_t pos = 0; pos < b.seq_kv_len[s]; ++pos) {
      const std::size_t at = slot_of(s, pos) * width;
      for (std::size_t e = 0; e < width; ++e) {
        b.k[at + e] = bf16_round(unit(rng));
        b.v[at + e] = bf16_round(unit(rng));
      }
    }
  }

  std::normal_distribution<float> normal(0.0f, 1.5f);
  for (int s : c.order) {
    for (std::int32_t i = 0; i < c.seqs[s].count; ++i) {
      const std::int32_t pos = c.seqs[s].start + i;
      b.token_seq.push_back(s);
      b.token_source.push_back(s);
      b.positions.push_back(pos);
      b.slot_mapping.push_back(static_cast<std::int32_t>(slot_of(s, pos)));
      for (std::int32_t e = 0; e < c.nq * c.head_dim; ++e) b.q.push_back(bf16_round(normal(rng)));
    }
  }
  b.num_tokens = static_cast<std::int32_t>(b.token_seq.size());
  return b;
}

// The batch of sequence `s` alone (sequence 0 there), over the same cache.
host_batch only_sequence(const host_batch& b, int s) {
  host_batch o = b;
  o.token_seq.clear();
  o.positions.clear();
  o.slot_mapping.clear();
  o.token_source.clear();
  o.q.clear();
  const std::size_t row = static_cast<std::size_t>(b.nq) * b.head_dim;
  for (std::int32_t t = 0; t < b.num_tokens; ++t) {
    if (b.token_seq[t] != s) continue;
    o.token_seq.push_back(0);
    o.positions.push_back(b.positions[t]);
    o.slot_mapping.push_back(b.slot_mapping[t]);
    o.token_source.push_back(s);
    o.q.insert(o.q.end(), b.q.begin() + static_cast<std::ptrdiff_t>(t * row),
               b.q.begin() + static_cast<std::ptrdiff_t>((t + 1) * row));
  }
  o.num_tokens = static_cast<std::int32_t>(o.token_seq.size());
  o.num_seqs = 1;
  o.seq_kv_len = {b.seq_kv_len[s]};
  o.max_kv_len = b.seq_kv_len[s];
  o.block_tables.assign(b.block_tables.begin() + static_cast<std::ptrdiff_t>(s) * b.max_blocks,
                        b.block_tables.begin() + static_cast<std::ptrdiff_t>(s + 1) * b.max_blocks);
  return o;
}

gpu::attention_batch batch_view(const host_batch& b, const std::int32_t* token_seq,
                                const std::int32_t* positions, const std::int32_t* slot_mapping,
                                const std::int32_t* seq_kv_len, const std::int32_t* tables) {
  gpu::attention_batch a;
  a.token_seq = token_seq;
  a.positions = positions;
  a.slot_mapping = slot_mapping;
  a.seq_kv_len = seq_kv_len;
  a.block_tables = tables;
  a.num_tokens = b.num_tokens;
  a.num_seqs = b.num_seqs;
  a.max_blocks_per_seq = b.max_blocks;
  a.block_size = b.block_size;
  a.max_kv_len = b.max_kv_len;
  return a;
}

gpu::kv_cache_view cache_view(const host_batch& b, void* k, void* v, gpu::dtype type) {
  gpu::kv_cache_view c;
  c.k = k;
  c.v = v;
  c.type = type;
  c.num_blocks = b.num_blocks;
  c.block_size = b.block_size;
  c.num_kv_heads = b.nk;
  c.head_dim = b.head_dim;
  return c;
}

float scale_of(const host_batch& b) {
  return 1.0f / std::sqrt(static_cast<float>(b.head_dim));
}

// The sim backend's attention, the reference: f32 copies of the same values.
std::vector<float> sim_attention(const host_batch& b) {
  auto dev = gpu::make_sim_device(1, 256);
  const std::size_t out_n = static_cast<std::size_t>(b.num_tokens) * b.nq * b.head_dim;
  auto q = dev->allocate(b.q.size() * 4), k = dev->allocate(b.k.size() * 4),
       v = dev->allocate(b.v.size() * 4), out = dev->allocate(out_n * 4);
  dev->upload(q.data(), b.q.data(), b.q.size() * 4);
  dev->upload(k.data(), b.k.data(), b.k.size() * 4);
  dev->upload(v.data(), b.v.data(), b.v.size() * 4);
  // The sim's device memory is host memory: the batch's index arrays are read in place.
  const gpu::attention_batch batch =
      batch_view(b, b.token_seq.data(), b.positions.data(), b.slot_mapping.data(),
                 b.seq_kv_len.data(), b.block_tables.data());
  dev->plan_attention(batch, b.nq, b.nk, b.head_dim);
  dev->attention(
      q.view(gpu::dtype::f32, b.num_tokens, static_cast<std::int64_t>(b.nq) * b.head_dim),
      cache_view(b, k.data(), v.data(), gpu::dtype::f32), batch, scale_of(b),
      out.view(gpu::dtype::f32, b.num_tokens, static_cast<std::int64_t>(b.nq) * b.head_dim));
  std::vector<float> result(out_n);
  dev->download(result.data(), out.data(), out_n * 4);
  return result;
}

// ---- the CUDA side ----

class device_memory {
 public:
  explicit device_memory(std::size_t size_bytes) {
    CUDA_CHECK(cudaMalloc(&data_, size_bytes > 0 ? size_bytes : 1));
  }
  ~device_memory() {
    if (data_) cudaFree(data_);
  }
  device_memory(device_memory&& o) noexcept : data_(std::exchange(o.data_, nullptr)) {}
  device_memory& operator=(device_memory&&) = delete;
  device_memory(const device_memory&) = delete;
  device_memory& operator=(const device_memory&) = delete;
  void* get() const { return data_; }

 private:
  void* data_ = nullptr;  // Owned.
};

template <class T>
device_memory to_device(const std::vector<T>& host) {
  device_memory d(host.size() * sizeof(T));
  CUDA_CHECK(cudaMemcpy(d.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

std::vector<std::uint16_t> to_bf16(const std::vector<float>& v) {
  std::vector<std::uint16_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = gpu::f32_to_bf16(v[i]);
  return out;
}

int device_sms() {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

// The kernel's bf16 output bits; num_splits > 0 overrides the plan's choice.
std::vector<std::uint16_t> cuda_attention(const host_batch& b, std::int32_t num_splits = 0) {
  cu::attention_plan plan = cu::plan_attention(
      sizes_of(b.num_tokens, b.num_seqs, b.max_kv_len, b.nq, b.nk, b.head_dim, device_sms()));
  REQUIRE(plan.supported);
  if (num_splits > 0) plan.num_splits = num_splits;
  const std::size_t out_n = static_cast<std::size_t>(b.num_tokens) * b.nq * b.head_dim;
  device_memory q = to_device(to_bf16(b.q)), k = to_device(to_bf16(b.k)),
                v = to_device(to_bf16(b.v)), out(out_n * 2),
                workspace(cu::attention_workspace_bytes(plan));
  device_memory token_seq = to_device(b.token_seq), positions = to_device(b.positions),
                slots = to_device(b.slot_mapping), kv_len = to_device(b.seq_kv_len),
                tables = to_device(b.block_tables);
  CUDA_CHECK(cudaMemset(out.get(), 0xff, out_n * 2));  // NaN wherever nothing is written
  CUDA_CHECK(cudaMemset(workspace.get(), 0xff, cu::attention_workspace_bytes(plan)));
  const auto batch = batch_view(b, static_cast<const std::int32_t*>(token_seq.get()),
                                static_cast<const std::int32_t*>(positions.get()),
                                static_cast<const std::int32_t*>(slots.get()),
                                static_cast<const std::int32_t*>(kv_len.get()),
                                static_cast<const std::int32_t*>(tables.get()));
  REQUIRE(cu::launch_attention_plan(plan, batch, workspace.get(), nullptr) == cudaSuccess);
  REQUIRE(cu::launch_attention(plan, q.get(), cache_view(b, k.get(), v.get(), gpu::dtype::bf16),
                               batch, scale_of(b), out.get(), workspace.get(),
                               nullptr) == cudaSuccess);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<std::uint16_t> result(out_n);
  CUDA_CHECK(cudaMemcpy(result.data(), out.get(), out_n * 2, cudaMemcpyDeviceToHost));
  return result;
}

// The mixed batch of the brief: prefill chunks from position 0 and from mid-sequence, decode rows
// with contexts 1, 17, 2048 and 8192, and a decode row verifying three drafts; tokens interleaved.
attention_case mixed_case(std::int32_t nq, std::int32_t nk, std::int32_t head_dim,
                          std::int32_t block_size) {
  return {nq,
          nk,
          head_dim,
          block_size,
          {{0, 70}, {300, 45}, {0, 1}, {16, 1}, {2047, 1}, {8191, 1}, {1020, 4}},
          {2, 0, 4, 1, 3, 6, 5}};
}

void check_against_sim(const attention_case& c, std::uint32_t seed) {
  const host_batch b = make_batch(c, seed);
  const std::vector<float> want = sim_attention(b);
  // The sim read only written slots (the others are NaN).
  REQUIRE(std::all_of(want.begin(), want.end(), [](float x) { return std::isfinite(x); }));

  // The plan for this batch on a 132-SM GPU splits the long decode rows.
  const cu::attention_plan on_h200 = cu::plan_attention(
      sizes_of(b.num_tokens, b.num_seqs, b.max_kv_len, b.nq, b.nk, b.head_dim, 132));
  REQUIRE(on_h200.supported);
  CHECK(on_h200.max_chunks == 16);
  CHECK(on_h200.num_splits > 1);

  if (!cu::has_device()) {
    WARN("no GPU: skipped");
    return;
  }
  const std::vector<std::uint16_t> got = cuda_attention(b);
  float max_err = 0.0f;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float x = gpu::bf16_to_f32(got[i]);
    const float err = std::isfinite(x) ? std::fabs(x - want[i]) : INFINITY;
    max_err = std::max(max_err, err);
    if (!(err <= 2e-2f)) ++bad;
  }
  INFO("max |cuda - sim| = " << max_err);
  CHECK(bad == 0);

  // Bit for bit the same however the keys are split across CTAs ...
  const cu::attention_plan planned = cu::plan_attention(
      sizes_of(b.num_tokens, b.num_seqs, b.max_kv_len, b.nq, b.nk, b.head_dim, device_sms()));
  for (std::int32_t splits : {1, 3, planned.max_chunks}) {
    INFO("num_splits " << splits);
    CHECK(cuda_attention(b, splits) == got);
  }
  // ... and whatever else is in the batch.
  const std::size_t row = static_cast<std::size_t>(b.nq) * b.head_dim;
  for (int s = 0; s < b.num_seqs; ++s) {
    const host_batch alone = only_sequence(b, s);
    const std::vector<std::uint16_t> got_alone = cuda_attention(alone);
    std::vector<std::uint16_t> in_batch;
    for (std::int32_t t = 0; t < b.num_tokens; ++t) {
      if (b.token_seq[t] != s) continue;
      in_batch.insert(in_batch.end(), got.begin() + static_cast<std::ptrdiff_t>(t * row),
                      got.begin() + static_cast<std::ptrdiff_t>((t + 1) * row));
    }
    INFO("sequence " << s << " alone");
    CHECK(got_alone == in_batch);
  }
}

}  // namespace

TEST_CASE("attention plan: a few long decode rows are split across CTAs to fill the GPU", "[cuda]") {
  const cu::attention_plan p = cu::plan_attention(sizes_of(4, 4, 8192, 32, 8, 128, 132));
  REQUIRE(p.supported);
  CHECK(p.group_size == 4);
  CHECK(p.tokens_per_tile == 16);
  CHECK(p.num_tile_ctas == 4);  // one per decode row
  CHECK(p.max_chunks == 8192 / cu::attention_kv_chunk);
  CHECK(p.num_splits == 9);  // 2 * 132 CTAs over 4 rows * 8 kv heads
  CHECK(cu::attention_workspace_bytes(p) ==
        256 + 4 * 32 * 16 * 2 * sizeof(float) + std::size_t{4} * 32 * 16 * 128 * sizeof(float));
}

TEST_CASE("attention plan: one decode row on a small GPU still splits, up to the chunk count",
          "[cuda]") {
  const cu::attention_plan p = cu::plan_attention(sizes_of(1, 1, 8192, 14, 2, 64, 132));
  CHECK(p.num_tile_ctas == 1);
  CHECK(p.num_splits == 16);  // 264 wanted, 16 chunks
  const cu::attention_plan unknown_sms = cu::plan_attention(sizes_of(1, 1, 8192, 14, 2, 64, 0));
  CHECK(unknown_sms.num_splits == 1);  // 2 CTAs wanted, 2 kv heads give them
}

TEST_CASE("attention plan: a large prefill batch is not split and needs only the tile list",
          "[cuda]") {
  const cu::attention_plan p = cu::plan_attention(sizes_of(4096, 2, 8192, 32, 8, 128, 132));
  REQUIRE(p.supported);
  CHECK(p.num_tile_ctas == 4096 / 16 + 2);
  CHECK(p.num_splits == 1);
  CHECK(cu::attention_workspace_bytes(p) == (std::size_t{4098} * 4 + 255) / 256 * 256);
}

TEST_CASE("attention plan: contexts within one chunk are never split", "[cuda]") {
  for (std::int32_t len : {0, 1, 17, cu::attention_kv_chunk}) {
    const cu::attention_plan p = cu::plan_attention(sizes_of(1, 1, len, 32, 8, 128, 132));
    CHECK(p.max_chunks == 1);
    CHECK(p.num_splits == 1);
  }
  const cu::attention_plan two =
      cu::plan_attention(sizes_of(1, 1, cu::attention_kv_chunk + 1, 32, 8, 128, 132));
  CHECK(two.max_chunks == 2);
  CHECK(two.num_splits == 2);
}

TEST_CASE("attention plan: splits stay within the chunk count, the cap and the workspace",
          "[cuda]") {
  for (std::int32_t t : {1, 7, 64, 300, 2048}) {
    for (std::int32_t len : {1, 513, 4096, 32768, 131072}) {
      for (std::int32_t sms : {1, 16, 132}) {
        const cu::attention_plan p = cu::plan_attention(sizes_of(t, t, len, 64, 8, 128, sms));
        INFO("T " << t << " len " << len << " sms " << sms);
        REQUIRE(p.supported);
        CHECK(p.num_splits >= 1);
        CHECK(p.num_splits <= std::min(p.max_chunks, cu::attention_max_splits));
        CHECK(static_cast<std::int64_t>(p.max_chunks) * cu::attention_kv_chunk >= len);
        const std::size_t tiles = (static_cast<std::size_t>(t) + 2) * 4;
        if (p.num_splits > 1) {
          CHECK(partial_bytes(p) <= cu::attention_split_cap_bytes);
          CHECK(cu::attention_workspace_bytes(p) >= tiles + partial_bytes(p));
          CHECK(cu::attention_workspace_bytes(p) <= tiles + partial_bytes(p) + 512);
        } else {
          CHECK(cu::attention_workspace_bytes(p) == (tiles + 255) / 256 * 256);
        }
      }
    }
  }
}

TEST_CASE("attention plan: a tile holds 64 / group tokens and the grid covers every tile",
          "[cuda]") {
  struct heads {
    std::int32_t nq, nk, tokens_per_tile;
  };
  for (const heads h : {heads{14, 2, 9}, heads{32, 8, 16}, heads{8, 8, 64}, heads{64, 1, 1}}) {
    const cu::attention_plan p = cu::plan_attention(sizes_of(100, 5, 300, h.nq, h.nk, 64, 132));
    REQUIRE(p.supported);
    CHECK(p.group_size == h.nq / h.nk);
    CHECK(p.tokens_per_tile == h.tokens_per_tile);
    CHECK(p.num_tile_ctas == std::min(100, (100 + h.tokens_per_tile - 1) / h.tokens_per_tile + 5));
  }
  const cu::attention_plan empty = cu::plan_attention(sizes_of(0, 0, 0, 32, 8, 128, 132));
  CHECK(empty.supported);
  CHECK(empty.num_tile_ctas == 0);
  CHECK(cu::attention_workspace_bytes(empty) == 0);
}

TEST_CASE("attention plan: head_dim 32 and 96 are planned like 64 and 128", "[cuda]") {
  for (std::int32_t hd : {32, 64, 96, 128}) {
    INFO("head_dim " << hd);
    CHECK(cu::plan_attention(sizes_of(4, 1, 100, 4, 2, hd, 132)).supported);
  }
  // tiny-qwen2's heads (4 query, 2 kv, head_dim 32) decoding four long rows: 32 tokens a tile,
  // 4 rows * 2 kv heads = 8 CTAs want 33 splits, the 16 chunks allow 16.
  const cu::attention_plan p = cu::plan_attention(sizes_of(4, 4, 8192, 4, 2, 32, 132));
  REQUIRE(p.supported);
  CHECK(p.group_size == 2);
  CHECK(p.tokens_per_tile == 32);
  CHECK(p.num_tile_ctas == 4);
  CHECK(p.max_chunks == 16);
  CHECK(p.num_splits == 16);
  CHECK(cu::attention_workspace_bytes(p) ==
        256 + 4 * 4 * 16 * 2 * sizeof(float) + std::size_t{4} * 4 * 16 * 32 * sizeof(float));
  // A prefill of the same model: 1000 / 32 tiles + 1, 2 kv heads, 2 chunks.
  const cu::attention_plan prefill = cu::plan_attention(sizes_of(1000, 1, 1000, 4, 2, 32, 132));
  REQUIRE(prefill.supported);
  CHECK(prefill.num_tile_ctas == 32 + 1);
  CHECK(prefill.max_chunks == 2);
  CHECK(prefill.num_splits == 2);
  CHECK(cu::attention_workspace_bytes(prefill) ==
        (std::size_t{1002} * 4 + 255) / 256 * 256 + std::size_t{1000} * 4 * 2 * 2 * sizeof(float) +
            std::size_t{1000} * 4 * 2 * 32 * sizeof(float));
  // head_dim 96 (Phi-3-like, 32 query heads on 32 kv heads): the partials scale with head_dim.
  const cu::attention_plan p96 = cu::plan_attention(sizes_of(4, 4, 8192, 32, 32, 96, 132));
  REQUIRE(p96.supported);
  CHECK(p96.tokens_per_tile == 64);
  CHECK(p96.num_tile_ctas == 4);
  CHECK(p96.num_splits == 3);  // 264 CTAs wanted over 4 rows * 32 kv heads
  CHECK(cu::attention_workspace_bytes(p96) ==
        256 + 4 * 32 * 16 * 2 * sizeof(float) + std::size_t{4} * 32 * 16 * 96 * sizeof(float));
}

TEST_CASE("attention plan: unsupported shapes are refused by the plan and by the launch", "[cuda]") {
  for (std::int32_t hd : {0, 16, 48, 80, 160, 256}) {
    INFO("head_dim " << hd);
    CHECK_FALSE(cu::plan_attention(sizes_of(4, 1, 100, 32, 8, hd, 132)).supported);
  }
  CHECK_FALSE(cu::plan_attention(sizes_of(4, 1, 100, 30, 8, 128, 132)).supported);  // nq % nk
  CHECK_FALSE(cu::plan_attention(sizes_of(4, 1, 100, 128, 1, 64, 132)).supported);  // group > 64
  CHECK_FALSE(cu::plan_attention(sizes_of(4, 1, 100, 32, 0, 64, 132)).supported);
  const cu::attention_plan bad = cu::plan_attention(sizes_of(4, 1, 100, 32, 8, 80, 132));
  CHECK(cu::attention_workspace_bytes(bad) == 0);

  // The launch checks its arguments before touching CUDA, so this runs without a GPU.
  alignas(16) static std::uint16_t dummy[64];
  gpu::kv_cache_view cache;
  cache.k = dummy;
  cache.v = dummy;
  cache.type = gpu::dtype::bf16;
  cache.num_blocks = 1;
  cache.block_size = 16;
  cache.num_kv_heads = 8;
  cache.head_dim = 128;
  gpu::attention_batch batch;
  batch.num_tokens = 4;
  batch.num_seqs = 1;
  batch.block_size = 16;
  batch.max_kv_len = 100;
  CHECK(cu::launch_attention(bad, dummy, cache, batch, 1.0f, dummy, dummy, nullptr) ==
        cudaErrorInvalidValue);
  const cu::attention_plan good = cu::plan_attention(sizes_of(4, 1, 100, 32, 8, 128, 132));
  gpu::kv_cache_view f32_cache = cache;
  f32_cache.type = gpu::dtype::f32;
  CHECK(cu::launch_attention(good, dummy, f32_cache, batch, 1.0f, dummy, dummy, nullptr) ==
        cudaErrorInvalidValue);
  gpu::kv_cache_view odd_blocks = cache;
  odd_blocks.block_size = 24;
  gpu::attention_batch odd_batch = batch;
  odd_batch.block_size = 24;
  CHECK(cu::launch_attention(good, dummy, odd_blocks, odd_batch, 1.0f, dummy, dummy, nullptr) ==
        cudaErrorInvalidValue);
  const cu::attention_plan plan32 = cu::plan_attention(sizes_of(4, 1, 100, 32, 8, 32, 132));
  REQUIRE(plan32.supported);
  CHECK(cu::launch_attention(plan32, dummy, cache, batch, 1.0f, dummy, dummy, nullptr) ==
        cudaErrorInvalidValue);  // a head_dim 128 cache
  gpu::attention_batch longer = batch;
  longer.max_kv_len = 5000;  // beyond what the plan's chunks cover
  CHECK(cu::launch_attention(good, dummy, cache, longer, 1.0f, dummy, dummy, nullptr) ==
        cudaErrorInvalidValue);
  gpu::attention_batch empty = batch;
  empty.num_tokens = 0;
  const cu::attention_plan none = cu::plan_attention(sizes_of(0, 0, 0, 32, 8, 128, 132));
  CHECK(cu::launch_attention(none, dummy, cache, empty, 1.0f, dummy, dummy, nullptr) ==
        cudaSuccess);

  // The planning launch checks what it reads: the batch against the plan, the token list, the
  // workspace's alignment.
  CHECK(cu::launch_attention_plan(bad, batch, dummy, nullptr) == cudaErrorInvalidValue);
  gpu::attention_batch more_seqs = batch;
  more_seqs.num_seqs = 2;  // the plan has one
  more_seqs.token_seq = reinterpret_cast<const std::int32_t*>(dummy);
  CHECK(cu::launch_attention_plan(good, more_seqs, dummy, nullptr) == cudaErrorInvalidValue);
  CHECK(cu::launch_attention_plan(good, batch, dummy, nullptr) ==
        cudaErrorInvalidValue);  // no token_seq
  gpu::attention_batch with_tokens = batch;
  with_tokens.token_seq = reinterpret_cast<const std::int32_t*>(dummy);
  CHECK(cu::launch_attention_plan(good, with_tokens, reinterpret_cast<char*>(dummy) + 4,
                                  nullptr) == cudaErrorInvalidValue);  // misaligned
  CHECK(cu::launch_attention_plan(none, empty, nullptr, nullptr) == cudaSuccess);
}

TEST_CASE("cuda attention: a mixed ragged batch matches the sim op with GQA 14/2, head_dim 64",
          "[gpu]") {
  check_against_sim(mixed_case(14, 2, 64, 16), 11);
}

TEST_CASE("cuda attention: a mixed ragged batch matches the sim op with GQA 32/8, head_dim 128",
          "[gpu]") {
  check_against_sim(mixed_case(32, 8, 128, 16), 12);
}

TEST_CASE("cuda attention: pages of 128 tokens give the sim op's result too", "[gpu]") {
  check_against_sim(mixed_case(14, 2, 64, 128), 13);
}

TEST_CASE("cuda attention: a mixed ragged batch matches the sim op with GQA 4/2, head_dim 32",
          "[gpu]") {
  check_against_sim(mixed_case(4, 2, 32, 16), 14);  // tiny-qwen2's heads
}

TEST_CASE("cuda attention: a mixed ragged batch matches the sim op with GQA 12/4, head_dim 96",
          "[gpu]") {
  check_against_sim(mixed_case(12, 4, 96, 16), 15);
}

TEST_CASE("cuda attention: every GPU of the process runs it, each with its own shared-memory "
          "opt-in (tensor parallelism: one rank a GPU)",
          "[gpu]") {
  int count = 0;
  if (!cu::has_device() || cudaGetDeviceCount(&count) != cudaSuccess || count < 2) {
    WARN("fewer than two GPUs: skipped");
    return;
  }
  // head_dim 64 and 128 need more than the 48 KB of shared memory a launch gets without
  // cudaFuncSetAttribute, which applies to the device current when it is called.
  for (std::int32_t head_dim : {64, 128}) {
    INFO("head_dim " << head_dim);
    const host_batch b =
        make_batch({4, 2, head_dim, 16, {{0, 9}, {40, 1}}, {0, 1}}, 21 + static_cast<std::uint32_t>(head_dim));
    std::vector<std::vector<std::uint16_t>> per_device;
    for (int d = 0; d < 2; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      per_device.push_back(cuda_attention(b));
    }
    CUDA_CHECK(cudaSetDevice(0));
    CHECK(per_device[0] == per_device[1]);
  }
}

}  // namespace courier_test_gpu_cuda_attention
