// courier bench-forward: forward-pass throughput of one backend, prefill and decode, as JSON.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "actors/cli/args.hpp"
#include "actors/cli/commands.hpp"
#include "actors/runtime/device_setup.hpp"
#include "gpu/model/kv_cache.hpp"

namespace courier::cli {

namespace {

constexpr const char* bench_help =
    "usage: courier bench-forward [--model DIR] [--config FILE] [--set k=v]\n"
    "         [--prefill-tokens N] [--context N] [--decode-steps N] [--batches 1,8,32]\n"
    "Prints one JSON object: prefill tokens/s (one sequence of N tokens) and decode tokens/s\n"
    "at each batch size (every sequence with `context` cached tokens).\n";

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

}  // namespace

int run_bench_forward(int argc, char** argv) {
  try {
    args a(argc, argv, 2,
           {"config", "model", "backend", "prefill-tokens", "context", "decode-steps", "batches"},
           {"help"});
    if (a.has("help")) {
      std::fputs(bench_help, stdout);
      return 0;
    }
    std::vector<std::string> sets = a.sets();
    if (auto m = a.get("model")) sets.insert(sets.begin(), "model.path=" + *m);
    if (auto b = a.get("backend")) sets.insert(sets.begin(), "device.backend=" + *b);
    const config::server_config cfg = config::load_config(a.get_or("config", ""), sets);
    const auto prefill_tokens = static_cast<std::int32_t>(a.get_int("prefill-tokens").value_or(512));
    const auto context = static_cast<std::int32_t>(a.get_int("context").value_or(128));
    const auto steps = static_cast<std::int32_t>(a.get_int("decode-steps").value_or(16));
    std::vector<unsigned> batches = parse_id_list(a.get_or("batches", "1,8,32"), "--batches");
    if (prefill_tokens < 1 || context < 1 || steps < 1) {
      throw usage_error("--prefill-tokens, --context and --decode-steps must be positive");
    }

    struct {
      std::unique_ptr<gpu::device> dev;
      std::unique_ptr<model::llama_model> model;
    } m;
    m.dev = actors::make_device(cfg);
    if (cfg.model.path.empty()) throw usage_error("--model DIR is required");
    std::fprintf(stderr, "courier: loading %s on %s\n", cfg.model.path.c_str(),
                 m.dev->name().c_str());
    m.model = model::llama_model::load(cfg.model.path, *m.dev);
    const model::model_config& mc = m.model->config();
    const std::int32_t bs = cfg.scheduler.block_size;
    std::mt19937 rng(1234);
    std::uniform_int_distribution<std::uint32_t> tok(0, static_cast<std::uint32_t>(mc.vocab_size) - 1);
    std::uint32_t max_batch = 1;
    for (unsigned b : batches) max_batch = std::max(max_batch, b);
    const std::int32_t per_seq = (std::max(prefill_tokens, context + steps) + bs - 1) / bs;
    model::kv_cache cache(*m.dev, mc, per_seq * static_cast<std::int32_t>(max_batch), bs);
    auto table_for = [&](std::uint32_t s) {
      std::vector<std::int32_t> t(static_cast<std::size_t>(per_seq));
      for (std::int32_t i = 0; i < per_seq; ++i) t[i] = static_cast<std::int32_t>(s) * per_seq + i;
      return t;
    };

    nlohmann::json out;
    out["model"] = cfg.model.path;
    out["device"] = m.dev->name();
    {  // prefill: one sequence, logits of the last token only
      model::forward_batch fb;
      model::forward_row row;
      for (std::int32_t i = 0; i < prefill_tokens; ++i) row.tokens.push_back(tok(rng));
      row.block_table = table_for(0);
      row.sample = true;
      fb.rows.push_back(row);
      m.model->forward(fb, cache);  // warm-up: sizes the workspace
      const auto t0 = clock_type::now();
      m.model->forward(fb, cache);
      const double s = seconds_since(t0);
      out["prefill"] = {{"tokens", prefill_tokens}, {"seconds", s},
                        {"tokens_per_s", prefill_tokens / s}};
    }
    nlohmann::json dec = nlohmann::json::array();
    for (unsigned b : batches) {
      for (std::uint32_t s = 0; s < b; ++s) {  // fill each sequence's context
        model::forward_batch fb;
        model::forward_row row;
        for (std::int32_t i = 0; i < context; ++i) row.tokens.push_back(tok(rng));
        row.block_table = table_for(s);
        row.logits = model::logits_mode::none;
        fb.rows.push_back(row);
        m.model->forward(fb, cache);
      }
      auto step = [&](std::int32_t i) {
        model::forward_batch fb;
        for (std::uint32_t s = 0; s < b; ++s) {
          model::forward_row row;
          row.tokens = {tok(rng)};
          row.start_pos = context + i;
          row.block_table = table_for(s);
          row.sample = true;
          fb.rows.push_back(row);
        }
        m.model->forward(fb, cache);
      };
      step(0);  // warm-up
      const auto t0 = clock_type::now();
      for (std::int32_t i = 1; i < steps; ++i) step(i);
      const double sec = seconds_since(t0);
      const double per_step = sec / (steps - 1 > 0 ? steps - 1 : 1);
      dec.push_back({{"batch", b}, {"context", context}, {"ms_per_step", per_step * 1e3},
                     {"tokens_per_s", b / per_step}});
    }
    out["decode"] = dec;
    std::cout << out.dump(2) << std::endl;
    return 0;
  } catch (const usage_error& e) {
    std::fprintf(stderr, "courier bench-forward: %s\n%s", e.what(), bench_help);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "courier bench-forward: %s\n", e.what());
    return 1;
  }
}

}  // namespace courier::cli
