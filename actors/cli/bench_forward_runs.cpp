#include "actors/cli/bench_forward_runs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <random>
#include <stdexcept>

#include "actors/cli/op_profiler.hpp"
#include "actors/runtime/device_setup.hpp"
#include "gpu/model/kv_cache.hpp"
#include "gpu/model/llama.hpp"
#include "gpu/model/model_shapes.hpp"
#include "gpu/model/roofline.hpp"

namespace courier::cli {

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

struct bench_model {
  std::unique_ptr<op_profiler> dev;  // the backend, behind the per-op profiler (off by default)
  std::unique_ptr<model::llama_model> model;
  // By table row: the per_seq of the table written there (0: none), as the engine keeps each
  // sequence's table on the device and writes only what changed.
  std::vector<std::int64_t> table_written;
};

bench_model make_model(const config::server_config& cfg, const bench_forward_options& o) {
  bench_model m;
  m.dev = std::make_unique<op_profiler>(actors::make_device(cfg));
  std::fprintf(stderr, "courier: %s %s on %s\n", o.random_weights ? "random weights of" : "loading",
               o.shape.c_str(), m.dev->name().c_str());
  if (auto shape = model::builtin_shape(o.shape)) {
    m.model = model::llama_model::random(*shape, *m.dev, o.seed);
  } else if (o.random_weights) {
    m.model = model::llama_model::random(model::load_model_config(o.shape), *m.dev, o.seed);
  } else {
    m.model = model::llama_model::load(o.shape, *m.dev);
  }
  if (m.model->config().hybrid()) {  // its rows need state slots and its FLOPs another model
    throw std::runtime_error(m.model->config().architecture_name +
                             ": bench-forward measures the Llama family; hybrid models are not "
                             "benchmarked yet");
  }
  return m;
}

// Sequence s owns blocks [s * per_seq, (s + 1) * per_seq).
std::vector<std::int32_t> table_for(std::int64_t s, std::int64_t per_seq) {
  std::vector<std::int32_t> t(static_cast<std::size_t>(per_seq));
  for (std::int64_t i = 0; i < per_seq; ++i) t[i] = static_cast<std::int32_t>(s * per_seq + i);
  return t;
}

// Launches decode step i of `batch` rows (within the reserved max_seqs: the model has twice as
// many slots), each at position context + i, greedy; row s's sample goes to next-token slot s
// and its block table is kept in table row s, as the engine's rows are (the table is written
// when the row holds another's). fed: row s is fed that slot's token on the device (what the
// launch before sampled for it), as the engine feeds rows that follow the step in flight; else a
// random token.
model::launched_forward launch_decode(bench_model& m, model::kv_cache& cache, std::int64_t batch,
                                      std::int64_t context, std::int64_t i, std::int64_t per_seq,
                                      std::mt19937& rng, bool fed) {
  std::uniform_int_distribution<std::uint32_t> tok(
      0, static_cast<std::uint32_t>(m.model->config().vocab_size) - 1);
  model::forward_batch fb;
  for (std::int64_t s = 0; s < batch; ++s) {
    model::forward_row row;
    row.tokens = {fed ? 0 : tok(rng)};
    row.token_slot = fed ? static_cast<std::int32_t>(s) : -1;
    row.next_slot = static_cast<std::int32_t>(s);
    m.table_written.resize(static_cast<std::size_t>(m.model->token_slots()), 0);
    std::int64_t& written = m.table_written.at(static_cast<std::size_t>(s));
    row.table_slot = static_cast<std::int32_t>(s);
    row.table_keep = written == per_seq ? static_cast<std::int32_t>(per_seq) : 0;
    written = per_seq;
    row.start_pos = static_cast<std::int32_t>(context + i);
    row.block_table = table_for(s, per_seq);
    row.sample = true;
    fb.rows.push_back(std::move(row));
  }
  return m.model->launch(fb, cache);
}

// One decode step, waited for.
void decode_step(bench_model& m, model::kv_cache& cache, std::int64_t batch, std::int64_t context,
                 std::int64_t i, std::int64_t per_seq, std::mt19937& rng) {
  launch_decode(m, cache, batch, context, i, per_seq, rng, false).finish();
}

// Seconds per step over steps [2, steps) of a batch. pipelined: each step is launched before the
// one before is finished, fed on the device, as the engine runs them (the device never waits for
// the host between steps); else each is finished before the next is built (the host's time to
// build and launch a step is then between every two steps on the device).
double timed_decode(bench_model& m, model::kv_cache& cache, std::int64_t batch,
                    std::int64_t context, std::int64_t steps, std::int64_t per_seq,
                    std::mt19937& rng, bool pipelined) {
  const auto t0 = clock_type::now();
  std::optional<model::launched_forward> in_flight;
  for (std::int64_t i = 2; i < steps; ++i) {
    model::launched_forward next = launch_decode(m, cache, batch, context, i, per_seq, rng, true);
    if (in_flight) in_flight->finish();
    in_flight = std::move(next);
    if (!pipelined) {
      in_flight->finish();
      in_flight.reset();
    }
  }
  if (in_flight) in_flight->finish();
  return seconds_since(t0) / static_cast<double>(steps - 2);
}

// The work counts as JSON (device::counted_work).
nlohmann::json work_json(const gpu::work_counts::tally& t) {
  return {{"kernels", t.kernels},       {"library_calls", t.library_calls},
          {"copies_h2d", t.copies_h2d}, {"bytes_h2d", t.bytes_h2d},
          {"copies_d2h", t.copies_d2h}, {"bytes_d2h", t.bytes_d2h},
          {"copies_d2d", t.copies_d2d}, {"bytes_d2d", t.bytes_d2d},
          {"memsets", t.memsets}};
}

// One decode step timed op by op (see op_profiler.hpp).
nlohmann::json profile_step(bench_model& m, model::kv_cache& cache, std::int64_t batch,
                            std::int64_t context, std::int64_t per_seq, std::mt19937& rng) {
  decode_step(m, cache, batch, context, 0, per_seq, rng);  // warm
  m.dev->start();
  decode_step(m, cache, batch, context, 1, per_seq, rng);
  m.dev->stop();
  const std::vector<op_profiler::op_time> times = m.dev->results();
  double total = 0;
  for (const auto& t : times) total += t.seconds;
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& t : times) {
    ops.push_back({{"op", t.op},
                   {"calls", t.calls},
                   {"ms", t.seconds * 1e3},
                   {"share", total > 0 ? t.seconds / total : 0.0}});
    if (t.work) ops.back()["work"] = work_json(*t.work);
    std::fprintf(stderr, "profile %-14s %5lld calls %9.3f ms %5.1f%%", t.op.c_str(),
                 static_cast<long long>(t.calls), t.seconds * 1e3,
                 total > 0 ? 100.0 * t.seconds / total : 0.0);
    if (t.work) {
      std::fprintf(stderr, "  %4lld kernels %4lld library calls",
                   static_cast<long long>(t.work->kernels),
                   static_cast<long long>(t.work->library_calls));
    }
    std::fputc('\n', stderr);
  }
  const double span = m.dev->span_seconds();
  std::fprintf(stderr, "profile: ops %.3f ms of a %.3f ms step; the device waited %.3f ms\n",
               total * 1e3, span * 1e3, (span - total) * 1e3);
  // ops_ms: the ops' device time; step_ms: first op's start to last op's end on the device (the
  // difference is the device waiting for the host between ops: launches, host work, and the
  // timestamps' own recording).
  return {{"batch", batch},
          {"context", context},
          {"ops_ms", total * 1e3},
          {"step_ms", span * 1e3},
          {"ops", ops}};
}

// What the benchmark holds between its cases: the model, a KV cache of `blocks` blocks (zeros),
// and the sizes every case is planned from.
struct bench_run {
  const bench_forward_options& o;
  bench_model m;
  std::int64_t bs = 0;     // tokens a block
  std::int64_t steps = 0;  // decode steps a case runs: warm-up and timed
  std::size_t workspace = 0, block_bytes = 0;
  std::int64_t available = 0;  // blocks that fit after the weights and workspaces
  std::int64_t blocks = 0;     // those the cache has: what the largest case needs, if they fit
  std::unique_ptr<model::kv_cache> cache;
  std::mt19937 rng{1234};

  std::string skipped(std::int64_t need) const {
    return fmt::format("needs {} KV blocks ({:.1f} GB); {} fit after the weights and workspaces",
                       need, static_cast<double>(need) * block_bytes / 1e9, available);
  }
};

// The memory plan covers the largest case, so timed steps allocate nothing.
gpu::workspace_limits limits_for(const bench_forward_options& o, std::int64_t bs,
                                 std::int64_t steps) {
  gpu::workspace_limits l;
  l.block_size = static_cast<std::int32_t>(bs);
  for (std::int64_t b : o.batches) {
    l.max_tokens = std::max(l.max_tokens, b);
    l.max_seqs = std::max(l.max_seqs, b);
  }
  for (std::int64_t c : o.contexts) l.max_kv_len = std::max(l.max_kv_len, c + steps);
  for (const prefill_case& p : o.prefill) {
    l.max_tokens = std::max(l.max_tokens, p.seqs * p.tokens);
    l.max_seqs = std::max(l.max_seqs, p.seqs);
    l.max_kv_len = std::max(l.max_kv_len, p.tokens);
  }
  l.max_sample_rows = l.max_seqs;
  return l;
}

void prepare(bench_run& r, const config::server_config& cfg) {
  const model::model_config& mc = r.m.model->config();
  r.bs = cfg.scheduler.block_size;
  r.steps = r.o.decode_steps + 2;
  // Decode steps replay graphs as the server's do (engine.graph_max_batch; 0: op by op).
  r.workspace = r.m.model->reserve(limits_for(r.o, r.bs, r.steps)) +
                r.m.model->enable_graphs(cfg.engine.graph_max_batch);
  r.block_bytes =
      model::kv_cache::block_bytes(mc, static_cast<std::int32_t>(r.bs), r.m.dev->compute_dtype());
  r.available = actors::kv_blocks_for(cfg, *r.m.dev, *r.m.model, r.workspace);
  std::int64_t needed = 0;
  for (std::int64_t b : r.o.batches)
    for (std::int64_t c : r.o.contexts) needed = std::max(needed, b * ceil_div(c + r.steps, r.bs));
  for (const prefill_case& p : r.o.prefill)
    needed = std::max(needed, p.seqs * ceil_div(p.tokens, r.bs));
  r.blocks = std::min(needed, r.available);
  r.cache = std::make_unique<model::kv_cache>(*r.m.dev, mc, static_cast<std::int32_t>(r.blocks),
                                              static_cast<std::int32_t>(r.bs));
  const std::size_t half_layer = static_cast<std::size_t>(r.blocks) * r.block_bytes / 2 /
                                 static_cast<std::size_t>(mc.num_layers);
  for (std::int32_t li = 0; li < mc.num_layers; ++li) {  // zeros, not whatever memory held
    const gpu::kv_cache_view v = r.cache->layer(li);
    r.m.dev->fill_zero(v.k, half_layer);
    r.m.dev->fill_zero(v.v, half_layer);
  }
}

// The work one decode step gives the device, fed on the device as the engine's steps are, where
// the device's runtime counts it; std::nullopt elsewhere.
std::optional<gpu::work_counts> counted_step(bench_run& r, std::int64_t batch, std::int64_t context,
                                             std::int64_t per_seq) {
  const std::optional<gpu::work_counts> before = r.m.dev->counted_work();
  if (!before) return std::nullopt;
  // The last position planned (timed steps run it too).
  launch_decode(r.m, *r.cache, batch, context, r.steps - 1, per_seq, r.rng, true).finish();
  return *r.m.dev->counted_work() - *before;
}

void print_work(std::int64_t batch, std::int64_t context, const gpu::work_counts& w) {
  const gpu::work_counts::tally all = w.eager + w.in_graphs;
  std::fprintf(stderr,
               "work   batch %4lld context %6lld: %lld graph launches; kernels %lld eager + %lld "
               "in graphs; library calls %lld + %lld; H2D %lld copies %lld B; D2H %lld copies "
               "%lld B\n",
               static_cast<long long>(batch), static_cast<long long>(context),
               static_cast<long long>(w.graph_launches), static_cast<long long>(w.eager.kernels),
               static_cast<long long>(w.in_graphs.kernels),
               static_cast<long long>(w.eager.library_calls),
               static_cast<long long>(w.in_graphs.library_calls),
               static_cast<long long>(all.copies_h2d), static_cast<long long>(all.bytes_h2d),
               static_cast<long long>(all.copies_d2h), static_cast<long long>(all.bytes_d2h));
}

nlohmann::json decode_case(bench_run& r, std::int64_t b, std::int64_t c) {
  const model::model_config& mc = r.m.model->config();
  const std::int64_t per_seq = ceil_div(c + r.steps, r.bs);
  if (b * per_seq > r.blocks) {
    return {{"batch", b}, {"context", c}, {"skipped", r.skipped(b * per_seq)}};
  }
  decode_step(r.m, *r.cache, b, c, 0, per_seq, r.rng);
  decode_step(r.m, *r.cache, b, c, 1, per_seq, r.rng);
  // The same positions twice: KV written again, the same work.
  const double serial = timed_decode(r.m, *r.cache, b, c, r.steps, per_seq, r.rng, false);
  const double per_step = timed_decode(r.m, *r.cache, b, c, r.steps, per_seq, r.rng, true);
  const double bytes = model::decode_step_bytes(mc, gpu::dtype_size(r.m.dev->weight_dtype()),
                                                gpu::dtype_size(r.m.dev->compute_dtype()), b, c);
  const double ideal = bytes / (r.o.peak_bandwidth_gbs * 1e9);
  nlohmann::json out = {{"batch", b},
                        {"context", c},
                        {"ms_per_step", per_step * 1e3},
                        {"ms_per_step_serial", serial * 1e3},
                        {"tokens_per_s", static_cast<double>(b) / per_step},
                        {"bytes_per_step", bytes},
                        {"roofline_ms", ideal * 1e3},
                        {"roofline_fraction", ideal / per_step}};
  std::fprintf(stderr,
               "decode batch %4lld context %6lld: %9.3f ms/step  %5.1f%% of roofline "
               "(%.3f ms/step waiting for each step)\n",
               static_cast<long long>(b), static_cast<long long>(c), per_step * 1e3,
               100.0 * ideal / per_step, serial * 1e3);
  if (const std::optional<gpu::work_counts> w = counted_step(r, b, c, per_seq)) {
    out["work_per_step"] = {{"graph_launches", w->graph_launches},
                            {"eager", work_json(w->eager)},
                            {"in_graphs", work_json(w->in_graphs)}};
    print_work(b, c, *w);
  }
  return out;
}

nlohmann::json prefill_case_json(bench_run& r, const prefill_case& p) {
  const std::int64_t per_seq = ceil_div(p.tokens, r.bs);
  if (p.seqs * per_seq > r.blocks) {
    return {{"seqs", p.seqs}, {"tokens", p.tokens}, {"skipped", r.skipped(p.seqs * per_seq)}};
  }
  std::uniform_int_distribution<std::uint32_t> tok(
      0, static_cast<std::uint32_t>(r.m.model->config().vocab_size) - 1);
  model::forward_batch fb;
  for (std::int64_t s = 0; s < p.seqs; ++s) {
    model::forward_row row;
    for (std::int64_t i = 0; i < p.tokens; ++i) row.tokens.push_back(tok(r.rng));
    row.block_table = table_for(s, per_seq);
    row.table_slot = static_cast<std::int32_t>(s);  // written whole by every repeat
    row.sample = true;
    fb.rows.push_back(std::move(row));
    // Table row s holds this table now: a decode row in it writes its own again.
    if (static_cast<std::size_t>(s) < r.m.table_written.size()) r.m.table_written[s] = 0;
  }
  r.m.model->forward(fb, *r.cache);  // warm-up
  const auto t0 = clock_type::now();
  for (std::int64_t i = 0; i < r.o.prefill_repeats; ++i) r.m.model->forward(fb, *r.cache);
  const double sec = seconds_since(t0) / static_cast<double>(r.o.prefill_repeats);
  const double flops = model::prefill_flops(r.m.model->config(), p.seqs, p.tokens);
  const double fraction = flops / sec / (r.o.peak_tflops * 1e12);
  std::fprintf(stderr, "prefill %lldx%lld: %9.3f ms  %5.1f%% of peak FLOP/s\n",
               static_cast<long long>(p.seqs), static_cast<long long>(p.tokens), sec * 1e3,
               100.0 * fraction);
  return {{"seqs", p.seqs},
          {"tokens", p.tokens},
          {"seconds", sec},
          {"tokens_per_s", static_cast<double>(p.seqs * p.tokens) / sec},
          {"flops", flops},
          {"tflops", flops / sec / 1e12},
          {"roofline_fraction", fraction}};
}

}  // namespace

nlohmann::json run_forward_benchmark(const config::server_config& cfg,
                                     const bench_forward_options& o) {
  bench_run r{o, make_model(cfg, o)};
  prepare(r, cfg);
  nlohmann::json out;
  out["shape"] = o.shape;
  out["random_weights"] = o.random_weights;
  out["device"] = r.m.dev->name();
  out["parameters"] = model::parameter_count(r.m.model->config());
  out["weight_bytes"] = r.m.model->weight_bytes();
  out["workspace_bytes"] = r.workspace;
  out["kv_blocks"] = r.blocks;
  out["graph_max_batch"] = cfg.engine.graph_max_batch;
  out["block_size"] = r.bs;
  out["peak"] = {{"bandwidth_gbs", o.peak_bandwidth_gbs}, {"tflops", o.peak_tflops}};

  nlohmann::json dec = nlohmann::json::array();
  for (std::int64_t c : o.contexts) {
    for (std::int64_t b : o.batches) dec.push_back(decode_case(r, b, c));
  }
  out["decode"] = dec;
  // Where one decode step's time goes: batch 1 at the first context, op by op (a graph would
  // hide the ops from the profiler, so graphs are off from here on; prefill never uses them).
  r.m.model->enable_graphs(0);
  if (!o.contexts.empty() && ceil_div(o.contexts[0] + 2, r.bs) <= r.blocks) {
    out["profile"] =
        profile_step(r.m, *r.cache, 1, o.contexts[0], ceil_div(o.contexts[0] + 2, r.bs), r.rng);
  }
  nlohmann::json pre = nlohmann::json::array();
  for (const prefill_case& p : o.prefill) pre.push_back(prefill_case_json(r, p));
  out["prefill"] = pre;
  return out;
}

}  // namespace courier::cli
