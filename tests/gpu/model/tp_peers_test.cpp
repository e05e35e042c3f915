// tp_peers: rank 0 on the caller's thread and its peers on theirs step the same launches; the
// peers' masks are rank 0's, a malformed batch leaves the group usable, and a failing rank
// aborts the group instead of leaving rank 0 waiting.
#include <catch2/catch.hpp>

#include "gpu/model/tp_peers.hpp"
#include "gpu/sim/sim_collectives.hpp"
#include "tests/support/fixtures.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_model_tp_peers {

using namespace courier;

namespace {

gpu::workspace_limits limits() {
  gpu::workspace_limits l;
  l.max_tokens = 64;
  l.max_seqs = 4;
  l.max_kv_len = 256;
  l.block_size = 16;
  return l;
}

// tiny-qwen2 over two sim devices: rank 0 here, rank 1 a peer.
struct two_ranks {
  std::vector<std::shared_ptr<gpu::collectives>> ends = gpu::sim::make_thread_group(2);
  std::unique_ptr<gpu::device> dev;
  std::unique_ptr<model::llama_model> model;
  std::unique_ptr<model::kv_cache> cache;
  std::unique_ptr<model::tp_peers> peers;

  two_ranks() {
    const std::string dir = test::model_dir("tiny-qwen2");
    std::vector<model::tp_peers::rank> ranks(1);
    for (int r = 0; r < 2; ++r) {
      auto d = gpu::make_sim_device(1, 1024);
      d->join_group(ends[static_cast<std::size_t>(r)]);
      auto m = model::llama_model::load(dir, *d);
      auto c = std::make_unique<model::kv_cache>(*d, m->shard_config(), 16, 16);
      if (r == 0) {
        dev = std::move(d), model = std::move(m), cache = std::move(c);
      } else {
        ranks[0] = {std::move(d), std::move(m), std::move(c)};
      }
    }
    peers = std::make_unique<model::tp_peers>(std::move(ranks), ends);
    peers->run([](model::tp_peers::rank& r) { r.model->reserve(limits()); },
               [&] { model->reserve(limits()); });
  }
};

// A prompt whose first sample is forced by a mask to `forced`, then `steps` greedy decode steps
// fed on the device from next-token slot 0: what each launch sampled.
std::vector<model::token_id> masked_then_fed(
    const std::function<model::forward_output(const model::forward_batch&,
                                              const model::mask_filler&)>& launch,
    std::int64_t vocab, model::token_id forced, int steps) {
  const std::vector<model::token_id> prompt = {1, 17, 42, 99, 7};
  std::vector<model::token_id> out;
  model::forward_batch fb;
  model::forward_row row;
  row.tokens = prompt;
  row.block_table = test::iota_table(4);
  row.table_slot = 0;  // written whole, then kept
  row.sample = true;
  row.next_slot = 0;
  row.sampling.mask_begin = 0;
  fb.rows.push_back(row);
  fb.mask_words.assign(static_cast<std::size_t>(gpu::mask_words_per_row(vocab)), 0);
  const model::mask_filler only_forced = [&](std::vector<std::uint32_t>& words) {
    words[forced / 32] |= 1u << (forced % 32);
  };
  out.push_back(launch(fb, only_forced).rows[0].samples.at(0).token);
  for (int s = 0; s < steps; ++s) {
    model::forward_batch step;
    model::forward_row d;
    d.tokens = {0};  // a placeholder: the slot's token is fed
    d.token_slot = 0;
    d.next_slot = 0;
    d.start_pos = static_cast<std::int32_t>(prompt.size()) + s;
    d.block_table = test::iota_table(4);
    d.table_slot = 0;
    d.table_keep = 4;
    d.sample = true;
    step.rows.push_back(d);
    out.push_back(launch(step, {}).rows[0].samples.at(0).token);
  }
  return out;
}

}  // namespace

TEST_CASE("tp_peers: every rank steps the launches, fed from its own next-token slots, with "
          "rank 0's masks; the tokens are one device's",
          "[model]") {
  two_ranks g;
  const std::int64_t V = g.model->config().vocab_size;
  // In rank 1's half of the vocabulary: rank 1 embeds it, so had it sampled another token
  // (masks of its own), the next step's embedding would not be this one's.
  const model::token_id forced = static_cast<model::token_id>(V - 5);
  const auto got = masked_then_fed(
      [&](const model::forward_batch& fb, const model::mask_filler& fill) {
        return g.peers->launch(*g.model, *g.cache, fb, fill).finish();
      },
      V, forced, 6);
  test::sim_model one("tiny-qwen2");
  one.model->reserve(limits());
  model::kv_cache cache(*one.dev, one.model->config(), 16, 16);
  const auto want = masked_then_fed(
      [&](const model::forward_batch& fb, const model::mask_filler& fill) {
        return one.model->launch(fb, cache, fill).finish();
      },
      V, forced, 6);
  REQUIRE(want[0] == forced);
  CHECK(got == want);
}

TEST_CASE("tp_peers: a malformed batch is refused before any rank starts and the group goes on; "
          "a failing rank aborts the group",
          "[model]") {
  two_ranks g;
  CHECK_THROWS_AS(g.peers->launch(*g.model, *g.cache, model::forward_batch{}, {}),
                  std::invalid_argument);
  model::forward_batch fb;
  model::forward_row row;
  row.tokens = {1, 2, 3};
  row.block_table = test::iota_table(1);
  row.table_slot = 0;
  row.sample = true;
  fb.rows.push_back(row);
  const auto first = g.peers->launch(*g.model, *g.cache, fb, {}).finish();
  CHECK(first.rows[0].samples.size() == 1);
  // Rank 1 fails while rank 0 waits in an all-reduce: rank 0 returns with the reason.
  std::vector<float> x(8, 1.0f);
  gpu::device_buffer buf = g.dev->allocate(x.size() * 4);
  g.dev->upload(buf.data(), x.data(), x.size() * 4);
  CHECK_THROWS_WITH(
      g.peers->run([](model::tp_peers::rank&) { throw std::runtime_error("rank 1 broke"); },
                   [&] { g.dev->all_reduce_sum(buf.view(gpu::dtype::f32, 1, 8)); }),
      Catch::Contains("rank 1 broke"));
  CHECK_THROWS(g.peers->launch(*g.model, *g.cache, fb, {}));  // the group stays aborted
}

}  // namespace courier_test_gpu_model_tp_peers
