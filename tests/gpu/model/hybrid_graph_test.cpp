// A hybrid's (NemotronH) decode steps replayed from graphs against the same steps run op by op
// on a second copy of the model. On the sim a graph is its recorded ops, replayed with exactly
// the pointers and sizes they were recorded with, so every sample and logprob must be equal bit
// for bit only if the graph steps read each row's Mamba-2 state row from device memory, their
// padding rows run on a state row of their own (one that stood on a sequence's row would reset
// it), and the snapshot copies around the rows happen in the eager order.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "gpu/sim/sim_device.hpp"
#include "tests/support/fixtures.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_model_hybrid_graph {

using namespace courier;

namespace {

constexpr std::int32_t block_size = 16;
constexpr std::int32_t num_seqs = 8;
constexpr std::int32_t blocks_per_seq = 8;
constexpr std::int32_t snapshot_rows = 4;  // rows num_seqs.. num_seqs + 3

gpu::workspace_limits limits() {
  gpu::workspace_limits l;
  l.max_tokens = 64;
  l.max_seqs = num_seqs;
  l.max_kv_len = blocks_per_seq * block_size;
  l.max_sample_rows = num_seqs;
  l.block_size = block_size;
  return l;
}

struct seq_state {
  std::vector<model::token_id> tokens;  // fed so far, then the next one to feed
  std::vector<std::int32_t> table;
  std::int32_t slot = 0;  // its state row, and its table row of the model's slots
  std::int32_t table_kept = 0;  // entries of `table` in its table row
  std::int32_t restore = -1;  // its next row restores this state row first
};

model::forward_row decode_row(const seq_state& s, std::int32_t snapshot) {
  model::forward_row r;
  r.tokens = {s.tokens.back()};
  r.start_pos = static_cast<std::int32_t>(s.tokens.size()) - 1;
  r.block_table = s.table;
  r.table_slot = s.slot;
  r.table_keep = s.table_kept;
  r.sample = true;
  r.sampling.temperature = 0.0f;
  r.sampling.num_logprobs = 3;
  r.state_slot = s.slot;
  r.state_restore = s.restore;
  r.state_snapshot = snapshot;
  return r;
}

// The same steps on two copies of tiny-hybrid: `graphs` with graphs on (so reserve_states adds
// the padding state row), `direct` without.
struct pair_run {
  test::sim_model graphs{"tiny-hybrid"}, direct{"tiny-hybrid"};
  model::kv_cache graphs_cache{*graphs.dev, graphs.model->config(), num_seqs * blocks_per_seq,
                               block_size};
  model::kv_cache direct_cache{*direct.dev, direct.model->config(), num_seqs * blocks_per_seq,
                               block_size};
  std::vector<seq_state> seqs;

  pair_run() {
    graphs.model->reserve(limits());
    direct.model->reserve(limits());
    graphs.model->enable_graphs(num_seqs);
    graphs.model->reserve_states(num_seqs + snapshot_rows);
    direct.model->reserve_states(num_seqs + snapshot_rows);
  }

  // Runs `fb` on both, checks every sample is identical, and feeds each row's sample to it.
  void step(const model::forward_batch& fb, const std::vector<std::int32_t>& who) {
    const model::forward_output a = graphs.model->forward(fb, graphs_cache);
    const model::forward_output b = direct.model->forward(fb, direct_cache);
    for (std::size_t r = 0; r < fb.rows.size(); ++r) {
      REQUIRE(a.rows[r].samples.size() == 1);
      REQUIRE(b.rows[r].samples.size() == 1);
      const gpu::sample_result &x = a.rows[r].samples[0], &y = b.rows[r].samples[0];
      INFO("row " << r << " (sequence " << who[r] << ")");
      CHECK(x.token == y.token);
      CHECK(x.logprob == y.logprob);
      CHECK(x.top_logprobs == y.top_logprobs);
      seq_state& s = seqs[static_cast<std::size_t>(who[r])];
      s.tokens.push_back(x.token);
      s.restore = -1;
      s.table_kept = static_cast<std::int32_t>(s.table.size());
    }
  }
};

}  // namespace

TEST_CASE("hybrid graphs: decode steps from graphs equal the same steps run op by op, padding "
          "and snapshots included",
          "[model][graphs]") {
  pair_run p;
  // The padding row is the graphs' own: the rows a scheduler may use are the same on both.
  CHECK(p.graphs.model->state_slots() == num_seqs + snapshot_rows);
  CHECK(p.direct.model->state_slots() == num_seqs + snapshot_rows);
  std::mt19937 rng(23);
  const auto vocab = static_cast<std::uint32_t>(p.direct.model->config().vocab_size);
  for (std::int32_t s = 0; s < num_seqs; ++s) {  // prefills: op by op
    seq_state st;
    const int len = 2 + static_cast<int>(rng() % 40);
    for (int i = 0; i < len; ++i) st.tokens.push_back(rng() % vocab);
    st.table = test::iota_table(blocks_per_seq, s * blocks_per_seq);
    st.slot = s;
    model::forward_batch fb;
    model::forward_row r;
    r.tokens = st.tokens;
    r.block_table = st.table;
    r.table_slot = s;  // written whole
    r.sample = true;
    r.sampling.temperature = 0.0f;
    r.sampling.num_logprobs = 3;
    r.state_slot = s;
    fb.rows.push_back(r);
    p.seqs.push_back(std::move(st));
    p.step(fb, {s});
  }
  REQUIRE(p.graphs.model->graph_steps() == 0);

  // Decode steps over random subsets (3, 5, 6 and 7 rows are padded), every fourth with a row
  // that snapshots its state. Sequence 0's snapshot at step 8 is kept for later.
  seq_state kept;
  const std::int32_t kept_row = num_seqs;
  for (int step = 0; step < 24; ++step) {
    std::vector<std::int32_t> who(num_seqs);
    for (std::int32_t s = 0; s < num_seqs; ++s) who[static_cast<std::size_t>(s)] = s;
    std::shuffle(who.begin(), who.end(), rng);
    who.resize(1 + rng() % num_seqs);
    if (step == 8) {
      who.erase(std::remove(who.begin(), who.end(), 0), who.end());
      who.push_back(0);
    }
    model::forward_batch fb;
    for (std::size_t i = 0; i < who.size(); ++i) {
      std::int32_t snapshot = -1;
      if (step == 8 && who[i] == 0) {
        snapshot = kept_row;
      } else if (step % 4 == 3 && i == 0) {
        snapshot = kept_row + 1 + step % 3;  // rows nobody restores: copies that change nothing
      }
      fb.rows.push_back(decode_row(p.seqs[static_cast<std::size_t>(who[i])], snapshot));
    }
    p.step(fb, who);
    if (step == 8) kept = p.seqs[0];  // its state after the token it fed is in kept_row
  }
  const std::uint64_t replays = p.graphs.model->graph_steps();
  CHECK(replays > 0);
  CHECK(p.graphs.model->num_graphs() > 0);
  CHECK(p.direct.model->graph_steps() == 0);

  // Sequence 0 stops; sequence 7's slot takes up sequence 0's answer where the snapshot left it
  // (the KV of its positions is still in sequence 0's blocks): its first row restores the
  // snapshot in a graph step. A graph path that skipped the restore would run it on sequence
  // 7's own state, and its samples would differ from the direct run's.
  kept.slot = 7;
  kept.restore = kept_row;
  kept.table_kept = 0;  // table row 7 holds sequence 7's table: written again
  p.seqs[7] = kept;
  for (int step = 0; step < 6; ++step) {
    const std::vector<std::int32_t> who = {7, 3, 5};  // 3 rows: padded to 4
    model::forward_batch fb;
    for (std::int32_t s : who) fb.rows.push_back(decode_row(p.seqs[static_cast<std::size_t>(s)], -1));
    p.step(fb, who);
  }
  CHECK(p.graphs.model->graph_steps() == replays + 6);
  // And the restored sequence continued sequence 0's greedy answer exactly as sequence 0 did.
  for (std::size_t i = 0; i < kept.tokens.size() + 6 && i < p.seqs[0].tokens.size(); ++i) {
    INFO("token " << i);
    CHECK(p.seqs[7].tokens[i] == p.seqs[0].tokens[i]);
  }
}

}  // namespace courier_test_gpu_model_hybrid_graph
