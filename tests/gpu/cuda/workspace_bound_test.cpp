// The memory plan's bounds (host only, no GPU needed): every attention and sampling plan within
// the engine's limits fits in what reserve() allocated at start.
#include <catch2/catch.hpp>

#include <random>

#include "gpu/cuda/kernels/attention.hpp"
#include "gpu/cuda/kernels/sampling.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_cuda_workspace_bound {

using namespace courier::gpu;
using namespace courier::gpu::cuda;

namespace {

struct heads {
  std::int32_t nq, nk, d;
};

}  // namespace

TEST_CASE("attention workspace bound: every plan within the limits fits", "[cuda]") {
  std::mt19937 rng(5);
  for (const heads h : {heads{32, 8, 128}, heads{16, 8, 128}, heads{14, 2, 64}, heads{64, 8, 128},
                        heads{4, 2, 32}}) {
    for (const int sms : {8, 132}) {
      for (const std::int32_t max_kv : {512, 4096, 32768, 131072}) {
        attention_sizes max{2048, 256, max_kv, h.nq, h.nk, h.d, sms};
        const std::size_t bound = attention_workspace_bound(max);
        std::size_t largest = 0;
        for (int i = 0; i < 400; ++i) {
          attention_sizes s = max;
          s.num_tokens = std::uniform_int_distribution<std::int32_t>(1, max.num_tokens)(rng);
          // Mostly small batches: those are the ones that split.
          if (i % 2) s.num_tokens = std::uniform_int_distribution<std::int32_t>(1, 64)(rng);
          s.num_seqs = std::uniform_int_distribution<std::int32_t>(
              1, std::min(s.num_tokens, max.num_seqs))(rng);
          s.max_kv_len = std::uniform_int_distribution<std::int32_t>(1, max_kv)(rng);
          if (i % 5 == 0) s.max_kv_len = max_kv;
          const std::size_t need = attention_workspace_bytes(plan_attention(s));
          largest = std::max(largest, need);
          REQUIRE(need <= bound);
        }
        // Every decode-sized batch at the longest context, where splits are largest.
        for (std::int32_t t = 1; t <= 300; ++t) {
          attention_sizes s = max;
          s.num_tokens = t;
          s.num_seqs = std::min(t, max.num_seqs);
          REQUIRE(attention_workspace_bytes(plan_attention(s)) <= bound);
        }
        // The bound is not vacuous: within the split cap plus the tile list.
        CHECK(bound <= attention_split_cap_bytes + (2048 + 2) * 4 + 512);
        CHECK(largest > 0);
      }
    }
  }
}

TEST_CASE("attention workspace bound: a batch that never splits needs only its tile list",
          "[cuda]") {
  // One chunk of context: no plan splits, so the bound is the tile list and its rounding.
  attention_sizes max{4096, 256, attention_kv_chunk, 32, 8, 128, 132};
  CHECK(attention_workspace_bound(max) == attention_tile_list_bytes(plan_attention(max)) + 256);
}

TEST_CASE("sampling workspace bound: every plan within the limits fits", "[cuda]") {
  std::mt19937 rng(9);
  const std::int64_t max_rows = 96, max_seqs = 32, max_context = 300, vocab = 5000;
  const sampling_bound b = sampling_workspace_bound(max_rows, max_seqs, max_context, vocab);
  CHECK(b.rows_bytes == 96 * sizeof(sampling_row));
  CHECK(b.output_bytes == 96 * sizeof(sampled_row_dev));
  CHECK(b.penalties_bytes == 32 * 300 * sizeof(penalty_token));
  CHECK(b.bias_bytes == 32 * max_bias_tokens * sizeof(bias_token));
  CHECK(b.mask_bytes == 96 * ((5000 + 31) / 32) * sizeof(std::uint32_t));  // a mask per position
  // Every sampled position may be biased (a row verifying drafts), so each may need a copy.
  CHECK(b.workspace_bytes == (96 * 5000 * sizeof(float) + 255) / 256 * 256);
  for (int i = 0; i < 300; ++i) {
    sampling_batch batch;
    const auto seqs = std::uniform_int_distribution<std::int64_t>(1, max_seqs)(rng);
    for (std::int64_t q = 0; q < seqs; ++q) {
      // A sequence's sampled positions: one, or 1 + drafts, within the rows left.
      const auto left = max_rows - static_cast<std::int64_t>(batch.rows.size()) - (seqs - q - 1);
      sampling_row row;
      if (i == 0 || rng() % 2) {
        row.bias_begin = static_cast<std::int32_t>(batch.bias_tokens.size());
        row.bias_count = std::uniform_int_distribution<std::int32_t>(1, max_bias_tokens)(rng);
        for (std::int32_t k = 0; k < row.bias_count; ++k) {
          batch.bias_tokens.push_back({static_cast<std::uint32_t>(k), 1.0f});
        }
      }
      std::int64_t positions = std::uniform_int_distribution<std::int64_t>(1, 3)(rng);
      if (rng() % 3 == 0) {  // penalties: one position
        positions = 1;
        row.penalty_begin = static_cast<std::int32_t>(batch.penalty_tokens.size());
        // Distinct tokens a row has seen: at most its context.
        row.penalty_count = std::uniform_int_distribution<std::int32_t>(1, max_context)(rng);
        for (std::int32_t k = 0; k < row.penalty_count; ++k) {
          batch.penalty_tokens.push_back({static_cast<std::uint32_t>(k), 1, false});
        }
      }
      if (i == 0 && q == 0) positions = left;  // once: all rows used, the most biased copies
      const bool masked = i == 1 || rng() % 2;  // each position has a mask of its own
      for (std::int64_t j = 0; j < std::min(positions, left); ++j) {
        if (masked) {
          row.mask_begin = static_cast<std::int64_t>(batch.mask_words.size());
          batch.mask_words.resize(batch.mask_words.size() + (vocab + 31) / 32, ~0u);
        }
        batch.rows.push_back(row);
      }
    }
    const auto rows = static_cast<std::int64_t>(batch.rows.size());
    const auto plan = plan_sampling(rows, vocab, batch);
    REQUIRE(plan);
    REQUIRE(plan->workspace_bytes <= b.workspace_bytes);
    REQUIRE(plan->output_bytes <= b.output_bytes);
    REQUIRE(batch.rows.size() * sizeof(sampling_row) <= b.rows_bytes);
    REQUIRE(batch.penalty_tokens.size() * sizeof(penalty_token) <= b.penalties_bytes);
    REQUIRE(batch.bias_tokens.size() * sizeof(bias_token) <= b.bias_bytes);
    REQUIRE(batch.mask_words.size() * sizeof(std::uint32_t) <= b.mask_bytes);
  }
  // A row's distinct penalty and bias tokens are bounded by the vocabulary too.
  CHECK(sampling_workspace_bound(4, 4, 1 << 20, 100).penalties_bytes ==
        4 * 100 * sizeof(penalty_token));
  CHECK(sampling_workspace_bound(4, 4, 1 << 20, 100).bias_bytes == 4 * 100 * sizeof(bias_token));
}

}  // namespace courier_test_gpu_cuda_workspace_bound
