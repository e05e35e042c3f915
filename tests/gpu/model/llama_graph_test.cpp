// Decode steps replayed from graphs (llama_model::enable_graphs) against the same steps run op
// by op on a second copy of the model: on the sim, where graphs are recorded ops that replay with
// exactly the pointers and sizes they were recorded with, every sample and logprob must be equal
// bit for bit. That holds only if the graph steps read everything that changes between steps
// (tokens, positions, slots, lengths, block tables) from device memory, pad correctly, and are
// dropped when the buffers they captured move.
#include <catch2/catch.hpp>

#include <map>
#include <numeric>
#include <random>
#include <set>

#include "gpu/forwarding_device.hpp"
#include "gpu/recording_device.hpp"
#include "gpu/sim/sim_device.hpp"
#include "gpu/model/lora_adapter.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/lora_fixture.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_model_llama_graph {

using namespace courier;

namespace {

constexpr std::int32_t block_size = 16;
constexpr std::int32_t num_seqs = 20;
constexpr std::int32_t blocks_per_seq = 8;  // 128 tokens each

gpu::workspace_limits limits() {
  gpu::workspace_limits l;
  l.max_tokens = 96;
  l.max_seqs = num_seqs;
  l.max_kv_len = 64 * block_size;  // tables up to 64 wide: context tiers 16, 32 and 64
  l.max_sample_rows = num_seqs;
  l.block_size = block_size;
  return l;
}

struct seq_state {
  std::vector<model::token_id> tokens;  // fed so far, then the next one to feed
  gpu::sampling_row sampling;
  std::vector<std::int32_t> table;  // written whole into table row `slot` by its prefill
  std::int32_t slot = 0;
};

model::forward_row decode_row(const seq_state& s) {
  model::forward_row r;
  r.tokens = {s.tokens.back()};
  r.start_pos = static_cast<std::int32_t>(s.tokens.size()) - 1;
  r.block_table = s.table;
  r.table_slot = s.slot;
  r.table_keep = static_cast<std::int32_t>(s.table.size());  // there since its prefill
  r.sample = true;
  r.sampling = s.sampling;
  r.sampling.draw_index = s.tokens.size();
  return r;
}

// Step 0 prefills s's tokens; later steps decode it.
model::forward_batch one_sequence_step(const seq_state& s, int step) {
  model::forward_batch fb;
  if (step == 0) {
    model::forward_row r;
    r.tokens = s.tokens;
    r.block_table = s.table;
    r.table_slot = s.slot;  // written whole
    r.sample = true;
    r.sampling = s.sampling;
    fb.rows.push_back(r);
  } else {
    fb.rows.push_back(decode_row(s));
  }
  return fb;
}

// The same steps on two copies of a model: `graphs` with graphs on, `direct` without.
struct pair_run {
  test::sim_model graphs, direct;
  model::kv_cache graphs_cache, direct_cache;
  std::vector<seq_state> seqs;

  explicit pair_run(const std::string& name)
      : graphs(name),
        direct(name),
        graphs_cache(*graphs.dev, graphs.model->config(), num_seqs * blocks_per_seq, block_size),
        direct_cache(*direct.dev, direct.model->config(), num_seqs * blocks_per_seq, block_size) {
    graphs.model->reserve(limits());
    direct.model->reserve(limits());
    graphs.model->enable_graphs(16);
  }

  // Runs `fb` on both and checks every sample is identical; returns the samples.
  std::vector<gpu::sample_result> step(const model::forward_batch& fb) {
    model::forward_output a = graphs.model->forward(fb, graphs_cache);
    model::forward_output b = direct.model->forward(fb, direct_cache);
    std::vector<gpu::sample_result> out;
    for (std::size_t r = 0; r < fb.rows.size(); ++r) {
      REQUIRE(a.rows[r].samples.size() == b.rows[r].samples.size());
      for (std::size_t j = 0; j < a.rows[r].samples.size(); ++j) {
        const gpu::sample_result &x = a.rows[r].samples[j], &y = b.rows[r].samples[j];
        CHECK(x.token == y.token);
        CHECK(x.logprob == y.logprob);
        CHECK(x.top_ids == y.top_ids);
        CHECK(x.top_logprobs == y.top_logprobs);
        out.push_back(x);
      }
    }
    return out;
  }
};

void prefill_all(pair_run& p, std::mt19937& rng) {
  const auto vocab = static_cast<std::uint32_t>(p.direct.model->config().vocab_size);
  for (std::int32_t s = 0; s < num_seqs; ++s) {
    seq_state st;
    const int len = 2 + static_cast<int>(rng() % 39);  // 2+: a prefill never replays a graph
    for (int i = 0; i < len; ++i) st.tokens.push_back(rng() % vocab);
    st.table = test::iota_table(blocks_per_seq, s * blocks_per_seq);
    st.slot = s;
    // Shuffled, except that sequence 0 starts with block 0: a padding row that wrote KV
    // anywhere (slot 0 is where a zeroed slot would land) would corrupt its first key.
    std::shuffle(st.table.begin() + (s == 0 ? 1 : 0), st.table.end(), rng);
    // Odd sequences carry 12 more table entries (unused positions): a step with one of them
    // has 20-wide tables, context tier 32; other steps tier 16.
    if (s % 2) {
      const std::vector<std::int32_t> own = st.table;
      for (int i = 0; i < 12; ++i) st.table.push_back(own[static_cast<std::size_t>(i % 8)]);
    }
    st.sampling.temperature = s % 2 ? 0.8f : 0.0f;
    st.sampling.top_k = s % 4 == 1 ? 20 : 0;
    st.sampling.seed = rng();
    st.sampling.num_logprobs = 5;
    model::forward_batch fb;
    model::forward_row r;
    r.tokens = st.tokens;
    r.block_table = st.table;
    r.table_slot = st.slot;  // written whole
    r.sample = true;
    r.sampling = st.sampling;
    r.sampling.draw_index = 0;
    fb.rows.push_back(r);
    st.tokens.push_back(p.step(fb).at(0).token);
    p.seqs.push_back(std::move(st));
  }
}

// One decode step over `who`; appends each sample to its sequence.
void decode(pair_run& p, const std::vector<std::int32_t>& who) {
  model::forward_batch fb;
  for (std::int32_t s : who) fb.rows.push_back(decode_row(p.seqs[static_cast<std::size_t>(s)]));
  const auto samples = p.step(fb);
  REQUIRE(samples.size() == who.size());
  for (std::size_t i = 0; i < who.size(); ++i) {
    p.seqs[static_cast<std::size_t>(who[i])].tokens.push_back(samples[i].token);
  }
}

std::vector<std::int32_t> random_subset(std::mt19937& rng, std::int32_t n) {
  std::vector<std::int32_t> all(num_seqs);
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(static_cast<std::size_t>(n));
  return all;
}

}  // namespace

TEST_CASE("llama graphs: decode steps from graphs equal the same steps run op by op",
          "[model][graphs]") {
  for (const char* name : {"tiny-qwen3", "tiny-llama3"}) {
    INFO(name);
    pair_run p(name);
    std::mt19937 rng(11);
    prefill_all(p, rng);
    std::set<std::pair<std::int32_t, std::int32_t>> shapes;  // (padded rows, tier)
    // Sizes 1..20: padded to 1, 2, 4, 8, 16; past 16 rows the step runs op by op.
    for (int step = 0; step < 60; ++step) {
      const std::int32_t n = 1 + static_cast<std::int32_t>(rng() % num_seqs);
      const std::vector<std::int32_t> who = random_subset(rng, n);
      const bool wide = std::any_of(who.begin(), who.end(), [](std::int32_t s) { return s % 2; });
      if (n <= 16) {
        shapes.insert({n <= 1 ? 1 : n <= 2 ? 2 : n <= 4 ? 4 : n <= 8 ? 8 : 16, wide ? 32 : 16});
      }
      decode(p, who);
    }
    CHECK(p.graphs.model->num_graphs() == shapes.size());
    CHECK(p.graphs.model->graph_steps() > 0);
    CHECK(p.direct.model->graph_steps() == 0);
  }
}

TEST_CASE("llama graphs: decode steps mixing LoRA adapters and the base replay graphs equal to "
          "the same steps op by op, also after an adapter is loaded over another",
          "[model][graphs][lora]") {
  const test::lora_fixture a("tiny-llama3", "--seed 31 --rank 8 --alpha 16 --targets q_proj,v_proj");
  const test::lora_fixture b("tiny-llama3",
                             "--seed 32 --rank 4 --alpha 8 --targets gate_proj,down_proj,o_proj");
  pair_run p("tiny-llama3");
  for (test::sim_model* m : {&p.graphs, &p.direct}) {
    m->model->reserve_loras(2, 8);
    m->model->load_lora(0, *model::load_lora_adapter("a", a.adapter(), m->model->config(), 8));
  }
  std::mt19937 rng(13);
  prefill_all(p, rng);
  // Sequence s runs with slot s % 3 - 1 (-1: the base).
  auto lora_decode = [&](const std::vector<std::int32_t>& who) {
    model::forward_batch fb;
    for (std::int32_t s : who) {
      fb.rows.push_back(decode_row(p.seqs[static_cast<std::size_t>(s)]));
      fb.rows.back().lora_slot = s % 3 - 1;
    }
    const auto samples = p.step(fb);
    for (std::size_t i = 0; i < who.size(); ++i) {
      p.seqs[static_cast<std::size_t>(who[i])].tokens.push_back(samples[i].token);
    }
  };
  for (int step = 0; step < 20; ++step) lora_decode(random_subset(rng, 1 + rng() % 8));
  const std::uint64_t replays = p.graphs.model->graph_steps();
  CHECK(replays > 0);
  // b goes into slot 1, then over a in slot 0: it targets linears a did not, which the graphs
  // captured so far must run too.
  for (test::sim_model* m : {&p.graphs, &p.direct}) {
    const auto adapter = model::load_lora_adapter("b", b.adapter(), m->model->config(), 8);
    m->model->load_lora(1, *adapter);
    m->model->load_lora(0, *adapter);
  }
  for (int step = 0; step < 20; ++step) lora_decode(random_subset(rng, 1 + rng() % 8));
  CHECK(p.graphs.model->graph_steps() > replays);
}

TEST_CASE("llama graphs: a step that moves the workspace drops the graphs, and they come back",
          "[model][graphs]") {
  pair_run p("tiny-qwen3");
  std::mt19937 rng(12);
  prefill_all(p, rng);
  const std::vector<std::int32_t> even = {2, 4, 6};  // 4 rows padded, tier 16
  for (int step = 0; step < 6; ++step) decode(p, even);
  REQUIRE(p.graphs.model->num_graphs() == 1);
  // Every position's logits of 30 more tokens of sequence 0: more logits rows than the 20
  // reserved, so the workspace grows (as prompt logprobs do) and the captured graph is stale.
  model::forward_batch big;
  big.return_logits = true;
  model::forward_row r;
  const seq_state& s0 = p.seqs[0];
  r.tokens.push_back(s0.tokens.back());
  for (int i = 1; i < 30; ++i) r.tokens.push_back(static_cast<model::token_id>(i * 13 % 200));
  r.start_pos = static_cast<std::int32_t>(s0.tokens.size()) - 1;
  REQUIRE(r.start_pos + 30 <= blocks_per_seq * block_size);
  r.block_table = s0.table;
  r.table_slot = s0.slot;
  r.table_keep = static_cast<std::int32_t>(s0.table.size());
  r.logits = model::logits_mode::all;
  big.rows.push_back(r);
  const auto a = p.graphs.model->forward(big, p.graphs_cache);
  const auto b = p.direct.model->forward(big, p.direct_cache);
  CHECK(a.rows[0].logits == b.rows[0].logits);
  // Sequence 0 is not decoded again. A graph still holding the old buffers would replay at
  // once; a dropped one is captured again first (that step runs directly).
  const std::uint64_t before = p.graphs.model->graph_steps();
  decode(p, even);
  decode(p, even);
  CHECK(p.graphs.model->num_graphs() == 1);
  CHECK(p.graphs.model->graph_steps() == before + 1);
}

TEST_CASE("recording device: a replay runs the recorded ops on what memory holds now", "[graphs]") {
  auto dev = gpu::make_sim_device(1, 64);
  auto x = dev->allocate(4 * 3 * sizeof(float));
  auto rows = dev->allocate(2 * sizeof(std::int32_t));
  auto out = dev->allocate(2 * 3 * sizeof(float));
  const std::vector<float> a = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  dev->upload(x.data(), a.data(), a.size() * sizeof(float));
  std::vector<std::int32_t> pick = {2, 0};
  dev->upload(rows.data(), pick.data(), 2 * sizeof(std::int32_t));
  const auto xv = x.view(gpu::dtype::f32, 4, 3), ov = out.view(gpu::dtype::f32, 2, 3);
  std::vector<float> got(6, -1.0f);
  dev->upload(out.data(), got.data(), got.size() * sizeof(float));
  auto g = dev->capture(
      [&] { dev->gather_rows(xv, static_cast<const std::int32_t*>(rows.data()), ov); });
  REQUIRE(g);
  dev->download(got.data(), out.data(), got.size() * sizeof(float));
  CHECK(got == std::vector<float>(6, -1.0f));  // recording ran nothing
  g->replay();
  dev->download(got.data(), out.data(), got.size() * sizeof(float));
  CHECK(got == std::vector<float>{7, 8, 9, 1, 2, 3});
  pick = {3, 1};
  dev->upload(rows.data(), pick.data(), 2 * sizeof(std::int32_t));
  g->replay();
  dev->download(got.data(), out.data(), got.size() * sizeof(float));
  CHECK(got == std::vector<float>{10, 11, 12, 4, 5, 6});
  CHECK_THROWS_AS(dev->capture([&] { dev->upload(rows.data(), pick.data(), 8); }),
                  std::logic_error);
  CHECK_THROWS_AS(dev->capture([&] { (void)dev->allocate(16); }), std::logic_error);
}

namespace {

// A device whose every capture fails part-way, as a CUDA capture does on an op it cannot record.
class failing_capture_device final : public gpu::forwarding_device {
 public:
  using forwarding_device::forwarding_device;
  std::unique_ptr<gpu::device_graph> capture(const std::function<void()>&) override {
    ++attempts;
    throw std::runtime_error("cudaErrorStreamCaptureUnsupported (test)");
  }
  int attempts = 0;
};

}  // namespace

TEST_CASE("llama graphs: a size whose capture fails runs op by op, with the same outputs",
          "[model][graphs]") {
  auto owned = std::make_unique<failing_capture_device>(gpu::make_sim_device(2, 1024));
  failing_capture_device& dev = *owned;
  std::unique_ptr<gpu::device> holder = std::move(owned);
  auto failing = model::llama_model::load(test::model_dir("tiny-llama3"), dev);
  test::sim_model direct("tiny-llama3");
  failing->reserve(limits());
  direct.model->reserve(limits());
  failing->enable_graphs(16);
  model::kv_cache c1(dev, failing->config(), 8, block_size),
      c2(*direct.dev, direct.model->config(), 8, block_size);
  seq_state s;
  s.tokens = {5, 17, 300, 42};
  s.table = test::iota_table(8);
  s.sampling.num_logprobs = 3;
  for (int step = 0; step < 6; ++step) {
    const model::forward_batch fb = one_sequence_step(s, step);
    const auto a = failing->forward(fb, c1).rows[0].samples.at(0);
    const auto b = direct.model->forward(fb, c2).rows[0].samples.at(0);
    CHECK(a.token == b.token);
    CHECK(a.top_logprobs == b.top_logprobs);
    s.tokens.push_back(a.token);
  }
  CHECK(dev.attempts == 1);  // tried once for the 1-row size, then never again
  CHECK(failing->num_graphs() == 0);
  CHECK(failing->graph_steps() == 0);
}

namespace {

// Counts the attention planning and attention calls that reach the device, under the recorder:
// graph replays reach it too.
class attention_counter final : public gpu::forwarding_device {
 public:
  using forwarding_device::forwarding_device;
  void plan_attention(const gpu::attention_batch& batch, std::int32_t nq, std::int32_t nk,
                      std::int32_t hd) override {
    ++plans;
    forwarding_device::plan_attention(batch, nq, nk, hd);
  }
  void attention(gpu::tensor_view q, gpu::kv_cache_view cache, const gpu::attention_batch& batch,
                 float scale, gpu::tensor_view out) override {
    ++attentions;
    forwarding_device::attention(q, cache, batch, scale, out);
  }
  int plans = 0, attentions = 0;
};

}  // namespace

TEST_CASE("llama model: attention is planned once per step, for every layer, eager and in graphs",
          "[model][graphs]") {
  auto counted = std::make_unique<attention_counter>(std::make_unique<gpu::sim::sim_device>(2, 1024));
  attention_counter& counter = *counted;
  gpu::recording_device dev(std::move(counted));
  auto m = model::llama_model::load(test::model_dir("tiny-llama3"), dev);
  const int layers = m->config().num_layers;
  REQUIRE(layers > 1);
  m->reserve(limits());
  m->enable_graphs(16);
  model::kv_cache cache(dev, m->config(), 8, block_size);
  seq_state s;
  s.tokens = {5, 17, 300, 42, 7};
  s.table = test::iota_table(8);
  for (int step = 0; step < 5; ++step) {
    const model::forward_batch fb = one_sequence_step(s, step);
    const int plans = counter.plans, attentions = counter.attentions;
    s.tokens.push_back(m->forward(fb, cache).rows[0].samples.at(0).token);
    INFO("step " << step);
    CHECK(counter.plans - plans == 1);
    CHECK(counter.attentions - attentions == layers);
  }
  CHECK(m->graph_steps() >= 3);  // steps 1 (captured, then replayed) to 4 came from a graph
}

}  // namespace courier_test_gpu_model_llama_graph
