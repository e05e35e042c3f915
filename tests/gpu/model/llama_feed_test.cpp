// Rows fed on the device from the launch before (forward_row::feed_from): each step launched
// behind the one before, before that one's samples are read, its decode rows fed the tokens that
// step sampled, must give exactly what running the same steps one at a time with those tokens
// written in gives: op by op and from graphs, greedy and seeded, samples and logprobs bit for bit
// on the sim. A row fed the placeholder, a stale sample or another row's would change them.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "tests/gpu/model/feed_steps.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_model_llama_feed {

using namespace courier;
using namespace courier::test::feed;

TEST_CASE("llama feed: rows fed on the device from the launch before equal rows given its tokens",
          "[model]") {
  for (const char* name : {"tiny-qwen3", "tiny-llama3"}) {
    for (const bool graphs : {false, true}) {
      INFO(name << (graphs ? ", graphs" : ", op by op"));
      test::sim_model m(name);
      m.model->reserve(limits());
      if (graphs) m.model->enable_graphs(8);
      model::kv_cache fed_cache(*m.dev, m.model->config(), 16, block_size),
          written_cache(*m.dev, m.model->config(), 16, block_size);
      const auto fed = run(*m.model, fed_cache, true);
      const auto written = run(*m.model, written_cache, false);
      require_same(fed, written);
      if (graphs) CHECK(m.model->graph_steps() > 0);
    }
  }
}

TEST_CASE("llama feed: a row may only be fed a position the launch before sampled", "[model]") {
  test::sim_model m("tiny-llama3");
  m.model->reserve(limits());
  model::kv_cache cache(*m.dev, m.model->config(), 16, block_size);
  const std::vector<seq> seqs = make_seqs();
  model::forward_batch one;
  one.rows = {decode(seqs[0], 1, 0)};
  one.rows[0].start_pos = 0;
  // Nothing launched yet.
  CHECK_THROWS_AS(m.model->launch(one, cache), std::invalid_argument);

  model::forward_batch two;
  two.rows = {prefill(seqs[0]), prefill(seqs[1])};
  (void)m.model->launch(two, cache).finish();
  one.rows[0].feed_from = 2;  // it sampled positions 0 and 1
  CHECK_THROWS_WITH(m.model->launch(one, cache), Catch::Contains("sampled 2"));

  // A launch that failed leaves nothing to feed from, even a position the one before had.
  (void)m.model->launch(two, cache).finish();
  model::forward_batch bad = two;
  bad.rows[1].block_table = {99};
  CHECK_THROWS_AS(m.model->launch(bad, cache), std::invalid_argument);
  one.rows[0].feed_from = 0;
  CHECK_THROWS_WITH(m.model->launch(one, cache), Catch::Contains("nothing usable"));

  // A row fed a sample holds exactly one token.
  (void)m.model->launch(two, cache).finish();
  model::forward_batch wide;
  wide.rows = {prefill(seqs[2])};
  wide.rows[0].feed_from = 0;
  CHECK_THROWS_AS(m.model->launch(wide, cache), std::invalid_argument);
}

}  // namespace courier_test_gpu_model_llama_feed
