// The engine's host work per decode step, without the device's: 256 decode rows at contexts of
// 1k, 8k and 32k tokens go through what the engine actor does with a plan (the block-table
// differences, the sequence slots, the kept sampling parameters, to_forward_batch) and the
// model's launch (checks, metadata, upload), on a device whose ops do nothing: block tables kept
// on the device, rows borrowing the engine's copies; and the same with every row penalised and
// biased (penalty lists and bias kept on the device). Prints the time per step and the bytes
// uploaded per step; both should stay flat in the context.
//
//   build/bench/engine_host_bench
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "actors/engine/engine_actor.hpp"
#include "actors/engine/sequence_table.hpp"
#include "gpu/forwarding_device.hpp"
#include "gpu/model/kv_cache.hpp"
#include "gpu/model/llama.hpp"
#include "gpu/stream_ops.hpp"

namespace {

using namespace courier;

// The sim's memory and uploads (counted), no op run: every stream op returns at once and every
// sample is token 1.
class null_device final : public gpu::forwarding_device {
 public:
  using forwarding_device::forwarding_device;
  std::size_t uploaded = 0;

  void upload(void* dst, const void* src, std::size_t n) override {
    uploaded += n;
    forwarding_device::upload(dst, src, n);
  }
#define COURIER_SKIP_STREAM_OP(name, params, args) \
  void name params override { (void)std::forward_as_tuple args; }
  COURIER_STREAM_OPS(COURIER_SKIP_STREAM_OP)
#undef COURIER_SKIP_STREAM_OP
  std::vector<gpu::sample_result> sample(gpu::tensor_view logits,
                                         const gpu::sampling_batch& batch) override {
    (void)logits;
    gpu::sample_result one;
    one.token = 1;
    return std::vector<gpu::sample_result>(batch.rows.size(), one);
  }
  std::shared_ptr<gpu::pending_samples> sample_async(gpu::tensor_view logits,
                                                     const gpu::sampling_batch& batch,
                                                     std::int32_t* tokens_out) override {
    (void)tokens_out;
    return std::make_shared<gpu::ready_samples>(sample(logits, batch));
  }
};

model::model_config small_model(std::int32_t vocab) {
  model::model_config c;
  c.architecture_name = "LlamaForCausalLM";
  c.vocab_size = vocab;
  c.hidden_size = 64;
  c.intermediate_size = 128;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 16;
  c.max_position_embeddings = 65536;
  return c;
}

constexpr std::int32_t rows = 256, block_size = 16, cache_blocks = 64;

// args: context, and whether every request has a frequency penalty and a 300-entry logit bias
// (1; a 32,000-token vocabulary, so a penalty list holds min(context, 32,000) entries).
void BM_engine_host_at_context(benchmark::State& state) {
  const auto context = static_cast<std::int32_t>(state.range(0));
  const bool penalised = state.range(1) != 0;
  null_device dev(gpu::make_sim_device(1, 1024));
  auto m = model::llama_model::random(small_model(penalised ? 32000 : 512), dev, 7);
  gpu::workspace_limits l;
  l.max_tokens = rows;
  l.max_seqs = rows;
  l.max_kv_len = context + 4096;
  l.max_sample_rows = rows;
  l.block_size = block_size;
  m->reserve(l);
  // Every table points into a small cache: the ops never run, so sequences may share blocks.
  model::kv_cache cache(dev, m->config(), cache_blocks, block_size);
  actors::sequence_table seqs(m->token_slots());

  // Each sequence's first row: its whole table and its parameters (not timed).
  const std::int32_t blocks = (context + block_size - 1) / block_size;
  std::size_t list_entries = 0;
  msg::step_plan plan;
  for (std::int32_t s = 0; s < rows; ++s) {
    msg::sequence_start st;
    st.seq = static_cast<msg::request_id>(s + 1);
    st.carries_sampling = true;
    st.sampling.temperature = 0.0f;
    st.sampling.has_seed = true;
    msg::plan_row r;
    r.seq = st.seq;
    r.tokens = {1};
    r.start_pos = context - 1;
    for (std::int32_t b = 0; b < blocks; ++b) r.new_blocks.push_back((s + b) % cache_blocks);
    r.sample = true;
    r.decode = true;
    if (penalised) {
      st.sampling.frequency_penalty = 0.5f;
      for (msg::token_id t = 0; t < static_cast<msg::token_id>(gpu::max_bias_tokens); ++t) {
        st.sampling.logit_bias_tokens.push_back(t * 7 + static_cast<msg::token_id>(s));
        st.sampling.logit_bias_values.push_back(t % 2 ? 1.0f : -1.0f);
      }
      for (std::int32_t t = 0; t < std::min(context, 32000); ++t) {
        st.penalties.push_back({static_cast<msg::token_id>(t), t % 3, true});
      }
      list_entries += st.penalties.size();
    }
    plan.starts.push_back(std::move(st));
    plan.rows.push_back(std::move(r));
  }
  // What the engine actor does with a plan, then the model's launch; returns the bytes uploaded.
  auto step = [&] {
    if (seqs.apply(plan)) std::abort();  // a protocol error: the bench is wrong
    const std::vector<actors::row_use> uses = seqs.resolve(plan);
    const std::size_t before = dev.uploaded;
    const model::forward_batch fb = actors::to_forward_batch(plan, seqs, uses);
    benchmark::DoNotOptimize(m->launch(fb, cache).finish());
    seqs.launched(plan, uses);
    return dev.uploaded - before;
  };
  // The next step: one token more, a new block every block_size tokens (sequence s's turn comes
  // at step s mod 16), no parameters.
  auto advance = [&] {
    for (std::size_t i = 0; i < plan.rows.size(); ++i) {
      msg::plan_row& r = plan.rows[i];
      const std::int32_t have = static_cast<std::int32_t>(seqs.find(r.seq)->table.size());
      r.start_pos += 1;
      r.keep_blocks = have;
      r.new_blocks.clear();
      if ((r.start_pos + 1 + block_size - 1) / block_size > have) {
        r.new_blocks.push_back(static_cast<std::int32_t>(i) % cache_blocks);
      }
    }
    plan.starts.clear();
  };
  step();  // the first rows: whole tables and parameters, not timed
  advance();
  std::int64_t steps = 0;
  std::size_t uploaded = 0;
  for (auto _ : state) {
    uploaded += step();
    ++steps;
    state.PauseTiming();
    advance();
    state.ResumeTiming();
  }
  state.counters["context"] = context;
  state.counters["rows"] = rows;
  state.counters["uploaded_bytes_per_step"] =
      steps > 0 ? static_cast<double>(uploaded) / static_cast<double>(steps) : 0;
  // What every step uploaded for these rows' penalties and bias before they were kept on the
  // device: each row's whole penalty list (12 bytes an entry) and bias (8 bytes an entry).
  state.counters["lists_resent_bytes"] =
      static_cast<double>(list_entries) * 12 +
      (penalised ? static_cast<double>(rows) * gpu::max_bias_tokens * 8 : 0);
}
BENCHMARK(BM_engine_host_at_context)
    ->ArgsProduct({{1024, 8192, 32768}, {0, 1}})
    ->Iterations(200)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
