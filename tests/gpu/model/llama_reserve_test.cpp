// The memory plan: after llama_model::reserve, a step within the limits allocates no device
// memory, whatever its mix of prefill chunks, decode rows and draft verification.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "tests/support/counting_device.hpp"
#include "tests/support/fixtures.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_model_llama_reserve {

using namespace courier;

namespace {

struct counted_model {
  test::counting_device* dev = nullptr;  // Borrowed from holder.
  std::unique_ptr<gpu::device> holder;
  std::unique_ptr<model::llama_model> model;

  explicit counted_model(const std::string& name) {
    auto d = std::make_unique<test::counting_device>(gpu::make_sim_device(2, 1024));
    dev = d.get();
    holder = std::move(d);
    model = model::llama_model::load(test::model_dir(name), *holder);
  }
};

gpu::workspace_limits small_limits() {
  gpu::workspace_limits l;
  l.max_tokens = 64;
  l.max_seqs = 6;
  l.max_kv_len = 160;
  l.max_sample_rows = 18;  // 6 rows x (1 + 2 drafts)
  l.block_size = 16;
  return l;
}

// A random step within `l`: rows of prefill chunks and decode rows verifying up to 2 drafts, with
// greedy, sampled, penalised and biased rows.
model::forward_batch random_step(std::mt19937& rng, const gpu::workspace_limits& l,
                                 std::int32_t vocab) {
  const auto per_seq = static_cast<std::int32_t>(l.max_kv_len / l.block_size);
  std::uniform_int_distribution<std::int32_t> tok(0, vocab - 1);
  model::forward_batch fb;
  std::int64_t budget = l.max_tokens;
  const int rows = std::uniform_int_distribution<int>(1, static_cast<int>(l.max_seqs))(rng);
  for (int r = 0; r < rows && budget > 0; ++r) {
    model::forward_row row;
    const bool decode = rng() % 2 == 0;
    const auto n = static_cast<std::int32_t>(
        decode ? std::uniform_int_distribution<std::int64_t>(1, std::min<std::int64_t>(3, budget))(rng)
               : std::uniform_int_distribution<std::int64_t>(1, budget)(rng));
    budget -= n;
    for (std::int32_t i = 0; i < n; ++i) row.tokens.push_back(static_cast<model::token_id>(tok(rng)));
    row.start_pos = std::uniform_int_distribution<std::int32_t>(
        0, static_cast<std::int32_t>(l.max_kv_len) - n)(rng);
    row.block_table = test::iota_table(per_seq, r * per_seq);
    row.table_slot = r;  // written whole
    row.sample = decode || rng() % 2 == 0;
    row.logits = row.sample ? model::logits_mode::last : model::logits_mode::none;
    row.num_sample = decode ? n : 1;
    row.sampling.temperature = rng() % 2 ? 0.0f : 0.8f;
    row.sampling.draw_index = 3;
    if (row.sample && row.num_sample == 1 && rng() % 3 == 0) {
      row.sampling.repetition_penalty = 1.3f;
      row.penalty_slot = r;  // its list written from the slice
      row.penalty_init = true;
      row.sampling.penalty_begin = static_cast<std::int32_t>(fb.penalty_tokens.size());
      row.sampling.penalty_count = 2;
      fb.penalty_tokens.push_back({static_cast<std::uint32_t>(tok(rng)), 1, true});
      fb.penalty_tokens.push_back({static_cast<std::uint32_t>(tok(rng)), 0, true});
    }
    if (row.sample && rng() % 3 == 0) {  // a logit bias, shared by the row's positions
      row.bias_slot = r;  // likewise
      row.bias_init = true;
      row.sampling.bias_begin = static_cast<std::int32_t>(fb.bias_tokens.size());
      row.sampling.bias_count = gpu::max_bias_tokens;
      for (std::int32_t j = 0; j < gpu::max_bias_tokens; ++j) {
        fb.bias_tokens.push_back({static_cast<std::uint32_t>(j), j % 2 ? 2.0f : -2.0f});
      }
    }
    fb.rows.push_back(std::move(row));
  }
  return fb;
}

}  // namespace

TEST_CASE("llama model: after reserve, steps within the limits allocate no device memory",
          "[model]") {
  for (const char* name : {"tiny-qwen3", "tiny-llama3"}) {
    counted_model m(name);
    const gpu::workspace_limits l = small_limits();
    model::kv_cache cache(*m.holder, m.model->config(),
                          static_cast<std::int32_t>(l.max_seqs * l.max_kv_len / l.block_size),
                          l.block_size);
    m.model->reserve(l);
    const int after_reserve = m.dev->num_allocations();
    std::mt19937 rng(11);
    for (int step = 0; step < 60; ++step) {
      const model::forward_batch fb = random_step(rng, l, m.model->config().vocab_size);
      const model::forward_output out = m.model->forward(fb, cache);
      REQUIRE(out.rows.size() == fb.rows.size());
    }
    CHECK(m.dev->num_allocations() == after_reserve);

    // The counter sees growth: one token past the limit allocates, and the step still runs.
    model::forward_batch big;
    model::forward_row row;
    row.tokens.assign(static_cast<std::size_t>(l.max_tokens + 1), 1);
    row.block_table = test::iota_table(static_cast<std::int32_t>(l.max_kv_len / l.block_size));
    row.table_slot = 0;
    row.sample = true;
    big.rows.push_back(row);
    CHECK(m.model->forward(big, cache).rows[0].samples.size() == 1);
    CHECK(m.dev->num_allocations() > after_reserve);
  }
}

TEST_CASE("llama model: reserve counts every workspace byte of the largest step", "[model]") {
  counted_model m("tiny-qwen3");
  const model::model_config& c = m.model->config();
  gpu::workspace_limits l = small_limits();
  const std::size_t bytes = m.model->reserve(l);
  // f32 activations on the sim: [T, H] x, h, o; [T, nq*D + 2*nk*D] qkv (the fused projection);
  // [T, nq*D] q (normed and rotated) and attn; [T, 2*I] gate_up (the fused projection); [T, I]
  // act; [R, H] picked; f32 [R, V] logits. The int32 metadata, each array padded to a multiple
  // of 4 entries: ids, positions, slots, token_seq [T]; kv_len [S]; the table entries written to
  // the device's table rows (every row's whole table at most), values, 0..n-1 and places
  // [S * blocks per row] each;
  // logit_index and sample_index [R]; the next-token slots' reads and writes and the penalty
  // lists' counts, sources and destinations [S] each. The int32 token sampled at each sampled
  // position [R], copied from there to the next-token slots, of which there are 2 S, each with a
  // device block-table row of max_kv_len / block_size entries and a penalty list of
  // min(max_kv_len, V) entries of three int32 words, and its length, and a bias list of
  // max_bias_tokens entries of two words.
  const std::int64_t T = l.max_tokens, S = l.max_seqs, R = l.max_sample_rows;
  const std::int64_t H = c.hidden_size, NQ = c.num_heads * c.head_dim,
                     NK = c.num_kv_heads * c.head_dim, I = c.intermediate_size, V = c.vocab_size;
  auto pad = [](std::int64_t n) { return (n + 3) / 4 * 4; };
  const std::int64_t meta =
      4 * pad(T) + 7 * pad(S) + 3 * pad(S * (l.max_kv_len / l.block_size)) + 2 * pad(R);
  const std::int64_t expect = 4 * (3 * T * H + T * (NQ + 2 * NK) + 2 * T * NQ + T * 2 * I +
                                   T * I + meta + R * H + R * V + R + 2 * S +
                                   2 * S * (l.max_kv_len / l.block_size) +
                                   2 * S * 3 * std::min<std::int64_t>(l.max_kv_len, V) + 2 * S +
                                   2 * S * 2 * gpu::max_bias_tokens);
  CHECK(static_cast<std::int64_t>(bytes) == expect);
  // The device was asked for the same step, with the model's heads and vocabulary.
  CHECK(m.dev->last_limits().max_tokens == T);
  CHECK(m.dev->last_limits().max_sample_rows == R);
  CHECK(m.dev->last_limits().num_kv_heads == c.num_kv_heads);
  CHECK(m.dev->last_limits().head_dim == c.head_dim);
  CHECK(m.dev->last_limits().vocab == V);

  // Sampled rows never exceed the tokens of a step, nor fall below one per row.
  l.max_sample_rows = 1000;
  m.model->reserve(l);
  CHECK(m.dev->last_limits().max_sample_rows == l.max_tokens);
  l.max_sample_rows = 1;
  m.model->reserve(l);
  CHECK(m.dev->last_limits().max_sample_rows == l.max_seqs);
  l.max_tokens = 0;
  CHECK_THROWS_AS(m.model->reserve(l), std::invalid_argument);
}

}  // namespace courier_test_gpu_model_llama_reserve
