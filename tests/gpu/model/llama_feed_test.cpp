// Rows fed on the device from their sequence's next-token slot (forward_row::token_slot, written
// by the launch before: next_slot): each step launched
// behind the one before, before that one's samples are read, its decode rows fed the tokens that
// step sampled, must give exactly what running the same steps one at a time with those tokens
// written in gives: op by op and from graphs, greedy and seeded, samples and logprobs bit for bit
// on the sim. A row fed the placeholder, a stale sample or another row's would change them.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <stdexcept>

#include "tests/gpu/model/feed_steps.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_model_llama_feed {

using namespace courier;
using namespace courier::test::feed;

namespace {

// The feed steps on model `name`, op by op and from graphs: run fed (with `scored` prompts and
// `device_tables` as asked) and run with the tokens written in must give the same samples.
void require_fed_equals_written(const char* name, bool scored, bool device_tables,
                                bool penalised = false) {
  for (const bool graphs : {false, true}) {
    INFO(name << (graphs ? ", graphs" : ", op by op"));
    test::sim_model m(name);
    m.model->reserve(limits());
    if (graphs) m.model->enable_graphs(8);
    model::kv_cache fed_cache(*m.dev, m.model->config(), 16, block_size),
        written_cache(*m.dev, m.model->config(), 16, block_size);
    const auto fed = run(*m.model, fed_cache, true, scored, device_tables, penalised);
    const auto written = run(*m.model, written_cache, false, false, false, penalised);
    require_same(fed, written);
    if (graphs) CHECK(m.model->graph_steps() > 0);
  }
}

}  // namespace

TEST_CASE("llama feed: rows fed on the device from the launch before equal rows given its tokens",
          "[model]") {
  for (const char* name : {"tiny-qwen3", "tiny-llama3"}) {
    require_fed_equals_written(name, false, false);
  }
}

TEST_CASE("llama feed: prefill rows that also score their prompt feed the same tokens", "[model]") {
  require_fed_equals_written("tiny-qwen3", true, false);
}

TEST_CASE("llama feed: block tables kept on the device give the outputs of tables written whole "
          "each step",
          "[model]") {
  require_fed_equals_written("tiny-qwen3", false, true);
}

TEST_CASE("llama feed: penalty lists kept on the device, each sample counted there before the "
          "next launch samples, and bias lists kept there, equal lists counted and written by "
          "the host each step",
          "[model]") {
  require_fed_equals_written("tiny-llama3", false, true, true);
  // The penalties change the samples, so lists ignored or stale would show.
  test::sim_model m("tiny-llama3");
  m.model->reserve(limits());
  model::kv_cache a(*m.dev, m.model->config(), 16, block_size),
      b(*m.dev, m.model->config(), 16, block_size);
  const auto plain = run(*m.model, a, false);
  const auto penalised = run(*m.model, b, false, false, false, true);
  REQUIRE(plain.size() == penalised.size());
  int differ = 0;
  for (std::size_t i = 0; i < plain.size(); ++i) differ += plain[i].token != penalised[i].token;
  INFO(differ << " of " << plain.size() << " samples differ");
  CHECK(differ >= 4);
  CHECK(differ < static_cast<int>(plain.size()));
}

TEST_CASE("llama model: a row whose table is on the device reads it there, not the host's",
          "[model]") {
  test::sim_model m("tiny-llama3");
  m.model->reserve(limits());
  const std::vector<seq> seqs = make_seqs();
  model::kv_cache a(*m.dev, m.model->config(), 16, block_size),
      b(*m.dev, m.model->config(), 16, block_size);
  // Sequence 2 prefilled with its table written whole, then its first decode row both ways.
  model::forward_batch pre;
  pre.rows = {prefill(seqs[2], 2)};
  pre.rows[0].next_slot = -1;
  const model::token_id first = m.model->forward(pre, a).rows[0].samples.at(0).token;
  REQUIRE(m.model->forward(pre, b).rows[0].samples.at(0).token == first);
  seq s = seqs[2];
  s.out = {first};
  model::forward_batch step;
  step.rows = {decode(s, 2, 1, false)};
  step.rows[0].next_slot = -1;
  const auto uploaded = m.model->forward(step, a).rows[0].samples.at(0);  // written whole
  // Table row 5 was never written (zeros): a row claiming its whole table is there reads block
  // 0 for every position, so it attends to other keys and its logprobs change.
  model::forward_batch stale = step;
  stale.rows[0].table_slot = 5;
  stale.rows[0].table_keep = static_cast<std::int32_t>(s.table.size());
  const auto wrong = m.model->forward(stale, b).rows[0].samples.at(0);
  CHECK(wrong.logprob != uploaded.logprob);
  // Written into another row first (table_keep 0), the same row gives that sample exactly.
  model::kv_cache c(*m.dev, m.model->config(), 16, block_size);
  REQUIRE(m.model->forward(pre, c).rows[0].samples.at(0).token == first);
  model::forward_batch right = stale;
  right.rows[0].table_slot = 6;
  right.rows[0].table_keep = 0;
  const auto kept = m.model->forward(right, c).rows[0].samples.at(0);
  CHECK(kept.token == uploaded.token);
  CHECK(kept.logprob == uploaded.logprob);
  CHECK(kept.top_logprobs == uploaded.top_logprobs);
}

TEST_CASE("llama model: scored positions are the log-softmax of their logits at the target",
          "[model]") {
  test::sim_model m("tiny-llama3");
  m.model->reserve(limits());
  model::kv_cache cache(*m.dev, m.model->config(), 16, block_size);
  const std::vector<seq> seqs = make_seqs();
  model::forward_batch fb;
  fb.rows = {prefill(seqs[1], 1), prefill(seqs[2], 2, true), prefill(seqs[3], 3)};
  fb.rows[1].score_targets[3] = -1;  // a gap: position 3 scores nothing
  fb.rows[1].score_top_n = 4;
  fb.rows[1].return_logits = true;   // the reference: the same launch's logits
  const model::forward_output out = m.model->forward(fb, cache);
  const auto V = static_cast<std::size_t>(m.model->config().vocab_size);
  const model::row_output& row = out.rows[1];
  const std::vector<std::int32_t>& targets = fb.rows[1].score_targets;
  REQUIRE(row.logits.size() == targets.size() * V);
  std::size_t k = 0;
  for (std::size_t p = 0; p < targets.size(); ++p) {
    if (targets[p] < 0) continue;
    INFO("position " << p);
    REQUIRE(k < row.scores.size());
    const gpu::sample_result& s = row.scores[k++];
    const float* x = row.logits.data() + p * V;
    double mx = x[0];
    for (std::size_t i = 0; i < V; ++i) mx = std::max(mx, static_cast<double>(x[i]));
    double sum = 0;
    for (std::size_t i = 0; i < V; ++i) sum += std::exp(x[i] - mx);
    const double lse = mx + std::log(sum);
    CHECK(s.token == static_cast<std::uint32_t>(targets[p]));
    CHECK(s.logprob == Approx(x[targets[p]] - lse).margin(1e-5));
    REQUIRE(s.top_ids.size() == 4);
    std::vector<std::uint32_t> ids(V);
    for (std::size_t i = 0; i < V; ++i) ids[i] = static_cast<std::uint32_t>(i);
    std::partial_sort(ids.begin(), ids.begin() + 4, ids.end(), [&](std::uint32_t a, std::uint32_t b) {
      return x[a] > x[b] || (x[a] == x[b] && a < b);
    });
    for (std::size_t j = 0; j < 4; ++j) {
      CHECK(s.top_ids[j] == ids[j]);
      CHECK(s.top_logprobs[j] == Approx(x[ids[j]] - lse).margin(1e-5));
    }
  }
  CHECK(k == row.scores.size());
  CHECK(row.scores.size() == targets.size() - 2);  // the gap and the last position
  CHECK(out.rows[0].scores.empty());
  CHECK(out.rows[1].samples.size() == 1);

  // A target per token, logits of all positions and a top-N within the limit, or nothing runs.
  model::forward_batch bad = fb;
  bad.rows[1].score_targets.pop_back();
  CHECK_THROWS_AS(m.model->launch(bad, cache), std::invalid_argument);
  bad = fb;
  bad.rows[1].logits = model::logits_mode::last;
  CHECK_THROWS_AS(m.model->launch(bad, cache), std::invalid_argument);
  bad = fb;
  bad.rows[1].score_targets[0] = static_cast<std::int32_t>(V);
  CHECK_THROWS_AS(m.model->launch(bad, cache), std::invalid_argument);
  bad = fb;
  bad.rows[1].score_top_n = gpu::max_logprobs + 1;
  CHECK_THROWS_AS(m.model->launch(bad, cache), std::invalid_argument);
}

TEST_CASE("llama feed: next-token slots are read by one-token rows and written by rows that "
          "sample one position, within the model's slots",
          "[model]") {
  test::sim_model m("tiny-llama3");
  const std::vector<seq> seqs = make_seqs();
  model::kv_cache cache(*m.dev, m.model->config(), 16, block_size);
  model::forward_batch one;
  one.rows = {decode(seqs[0], 0, 1, true)};
  one.rows[0].start_pos = 0;
  // No slots before reserve().
  CHECK(m.model->token_slots() == 0);
  CHECK_THROWS_WITH(m.model->launch(one, cache), Catch::Contains("slot"));
  m.model->reserve(limits());
  CHECK(m.model->token_slots() == 2 * limits().max_seqs);
  (void)m.model->launch(one, cache).finish();

  model::forward_batch bad = one;
  bad.rows[0].token_slot = m.model->token_slots();
  CHECK_THROWS_WITH(m.model->launch(bad, cache), Catch::Contains("reads next-token slot"));
  bad = one;
  bad.rows[0].next_slot = m.model->token_slots();
  CHECK_THROWS_WITH(m.model->launch(bad, cache), Catch::Contains("writes next-token slot"));

  // A table row: required, within the model's, keeping no more than the table has; the entries
  // it writes are checked against the cache.
  bad = one;
  bad.rows[0].table_slot = -1;
  CHECK_THROWS_WITH(m.model->launch(bad, cache), Catch::Contains("table row -1"));
  bad = one;
  bad.rows[0].table_slot = m.model->token_slots();
  CHECK_THROWS_WITH(m.model->launch(bad, cache), Catch::Contains("table row"));
  bad = one;
  bad.rows[0].table_slot = 0;
  bad.rows[0].table_keep = static_cast<std::int32_t>(bad.rows[0].block_table.size()) + 1;
  CHECK_THROWS_WITH(m.model->launch(bad, cache), Catch::Contains("table row"));
  bad = one;
  bad.rows[0].table_slot = 0;
  bad.rows[0].block_table.back() = 99;  // past the cache's 16 blocks, and written this launch
  CHECK_THROWS_WITH(m.model->launch(bad, cache), Catch::Contains("out of range"));

  // A row fed from a slot holds exactly one token.
  model::forward_batch wide;
  wide.rows = {prefill(seqs[2], 2)};
  wide.rows[0].token_slot = 0;
  CHECK_THROWS_AS(m.model->launch(wide, cache), std::invalid_argument);
  // Only a row that samples exactly one position writes a slot.
  model::forward_batch silent;
  silent.rows = {prefill(seqs[2], 2)};
  silent.rows[0].sample = false;
  CHECK_THROWS_AS(m.model->launch(silent, cache), std::invalid_argument);
  model::forward_batch drafts;
  drafts.rows = {prefill(seqs[2], 2)};
  drafts.rows[0].num_sample = 3;
  CHECK_THROWS_AS(m.model->launch(drafts, cache), std::invalid_argument);
}

}  // namespace courier_test_gpu_model_llama_feed
