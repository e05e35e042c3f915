// Outputs must not depend on how a prompt is chunked, on what else is in the batch, or on the
// KV block layout: on the sim backend, bit for bit; for the hybrid (NemotronH) too, whose
// Mamba-2 layers carry each sequence's state between steps.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>

#include "tests/support/fixtures.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_model_llama_batching {

using namespace courier;

namespace {

// A sequence being fed to the model over several steps.
struct feed {
  std::vector<model::token_id> tokens;   // everything this sequence will be fed
  std::vector<std::int32_t> table;
  std::size_t fed = 0;
  std::vector<float> logits;             // collected, [fed, vocab]

  bool done() const { return fed == tokens.size(); }
  model::forward_row next(std::size_t n) const {
    model::forward_row r;
    n = std::min(n, tokens.size() - fed);
    r.tokens.assign(tokens.begin() + static_cast<std::ptrdiff_t>(fed),
                    tokens.begin() + static_cast<std::ptrdiff_t>(fed + n));
    r.start_pos = static_cast<std::int32_t>(fed);
    r.block_table = table;
    r.logits = model::logits_mode::all;
    return r;
  }
};

// Block tables for `count` sequences of up to `len` tokens, drawn shuffled from one pool.
std::vector<std::vector<std::int32_t>> shuffled_tables(int count, std::size_t len,
                                                       std::int32_t block_size,
                                                       std::int32_t& num_blocks) {
  const auto per = static_cast<std::int32_t>((len + block_size - 1) / block_size);
  num_blocks = per * count;
  std::vector<std::int32_t> ids(static_cast<std::size_t>(num_blocks));
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), std::mt19937(7));
  std::vector<std::vector<std::int32_t>> out;
  for (int s = 0; s < count; ++s)
    out.emplace_back(ids.begin() + s * per, ids.begin() + (s + 1) * per);
  return out;
}

// Feeds every sequence in chunks of its own size, all sequences in the same steps.
void run_together(model::llama_model& m, std::vector<feed>& seqs,
                  const std::vector<std::size_t>& chunk, std::int32_t num_blocks,
                  std::int32_t block_size) {
  model::kv_cache cache(m.device(), m.config(), num_blocks, block_size);
  for (;;) {
    model::forward_batch fb;
    fb.return_logits = true;
    std::vector<std::size_t> who;
    for (std::size_t s = 0; s < seqs.size(); ++s) {
      if (seqs[s].done()) continue;
      fb.rows.push_back(seqs[s].next(chunk[s]));
      // A hybrid's sequences each continue from their own Mamba-2 state row.
      if (m.config().hybrid()) fb.rows.back().state_slot = static_cast<std::int32_t>(s) + 1;
      who.push_back(s);
    }
    if (fb.rows.empty()) return;
    test::in_slots(m, fb, block_size);
    auto out = m.forward(fb, cache);
    for (std::size_t i = 0; i < who.size(); ++i) {
      feed& f = seqs[who[i]];
      f.logits.insert(f.logits.end(), out.rows[i].logits.begin(), out.rows[i].logits.end());
      f.fed += fb.rows[i].tokens.size();
    }
  }
}

std::vector<model::token_id> random_tokens(std::size_t n, std::uint32_t vocab, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<model::token_id> t(n);
  for (auto& x : t) x = rng() % vocab;
  return t;
}

void check_chunking(const std::string& name, const std::string& prompt_key) {
  test::sim_model sm(name);
  test::reference ref(name);
  const auto prompt = ref.ids(prompt_key);
  const auto whole = test::prefill_all_logits(*sm.model, prompt);
  for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, std::size_t{16}}) {
    INFO(name << " " << prompt_key << " in chunks of " << chunk);
    std::int32_t blocks = 0;
    auto tables = shuffled_tables(1, prompt.size(), 16, blocks);
    std::vector<feed> seqs{{prompt, tables[0]}};
    run_together(*sm.model, seqs, {chunk}, blocks, 16);
    CHECK(seqs[0].logits == whole);
  }
}

}  // namespace

TEST_CASE("llama model: prefill in chunks of 1, 7 and 16 gives bit-identical logits",
          "[model][batching]") {
  check_chunking("tiny-qwen3", "p2.ids");
  check_chunking("tiny-llama3", "p5.ids");
  check_chunking("tiny-qwen2", "p6.ids");
  // NemotronH: the conv and SSM states carried between chunks give the same bits too.
  check_chunking("tiny-hybrid", "p6.ids");
  check_chunking("tiny-hybrid", "p3.ids");
}

TEST_CASE("llama model: a prompt batched with other prefill chunks and decode rows is unchanged",
          "[model][batching]") {
  for (const std::string name : {"tiny-qwen3", "tiny-llama3", "tiny-qwen2", "tiny-hybrid"}) {
    INFO(name);
    test::sim_model sm(name);
    test::reference ref(name);
    const auto V = static_cast<std::uint32_t>(sm.model->config().vocab_size);
    const auto target = ref.ids("p6.ids");  // 129 tokens
    const auto whole = test::prefill_all_logits(*sm.model, target);

    // Others: a long prompt fed in chunks of 7, and "decode" sequences fed one token a step
    // after a prompt of their own, so the target shares steps with both kinds of row.
    std::vector<feed> seqs;
    std::int32_t blocks = 0;
    auto tables = shuffled_tables(4, 300, 16, blocks);
    seqs.push_back({target, tables[0]});
    seqs.push_back({random_tokens(300, V, 1), tables[1]});
    seqs.push_back({random_tokens(90, V, 2), tables[2]});
    seqs.push_back({random_tokens(40, V, 3), tables[3]});
    run_together(*sm.model, seqs, {16, 7, 1, 1}, blocks, 16);
    CHECK(seqs[0].logits == whole);
    // And each of the others equals its own run alone.
    for (std::size_t s = 1; s < seqs.size(); ++s) {
      CHECK(seqs[s].logits == test::prefill_all_logits(*sm.model, seqs[s].tokens));
    }
  }
}

TEST_CASE("llama model: decoding with a paged cache equals recomputing from scratch",
          "[model][batching]") {
  for (const std::string name : {"tiny-qwen3", "tiny-llama3", "tiny-qwen2"}) {
    for (std::int32_t block_size : {16, 5}) {
      INFO(name << " block size " << block_size);
      test::sim_model sm(name);
      test::reference ref(name);
      const auto V = static_cast<std::size_t>(sm.model->config().vocab_size);
      std::vector<model::token_id> seq = ref.ids("p5.ids");  // 17 tokens
      std::int32_t blocks = 0;
      auto tables = shuffled_tables(1, seq.size() + 12, block_size, blocks);
      model::kv_cache cache(*sm.dev, sm.model->config(), blocks, block_size);
      std::size_t cached = 0;
      for (int step = 0; step < 12; ++step) {
        model::forward_batch fb;
        fb.return_logits = true;
        model::forward_row row;
        row.tokens.assign(seq.begin() + static_cast<std::ptrdiff_t>(cached), seq.end());
        row.start_pos = static_cast<std::int32_t>(cached);
        row.block_table = tables[0];
        row.sample = true;  // greedy
        fb.rows.push_back(row);
        test::in_slots(*sm.model, fb, block_size);
        auto out = sm.model->forward(fb, cache);
        cached = seq.size();
        const auto scratch = test::prefill_all_logits(*sm.model, seq);
        const std::vector<float> scratch_last(scratch.end() - static_cast<std::ptrdiff_t>(V),
                                              scratch.end());
        REQUIRE(out.rows[0].logits == scratch_last);
        CHECK(out.rows[0].samples.at(0).token == test::argmax(scratch_last.data(), V));
        seq.push_back(out.rows[0].samples.at(0).token);
      }
    }
  }
}

}  // namespace courier_test_gpu_model_llama_batching
