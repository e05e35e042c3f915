// courier bench-forward: per-step decode time and prefill throughput of one backend on a model
// shape, each with its roofline fraction, as JSON (issue: decode and prefill near the GPU's
// limits). Runs on real weights (a model folder) or random ones made on the device, so a 16 GB
// model is not needed to measure its shape.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "actors/cli/args.hpp"
#include "actors/cli/bench_forward_runs.hpp"
#include "actors/cli/commands.hpp"
#include "actors/runtime/device_setup.hpp"
#include "gpu/model/model_shapes.hpp"

namespace courier::cli {

namespace {

constexpr const char* bench_help =
    "usage: courier bench-forward --shape NAME|DIR [--random-weights] [--seed N]\n"
    "         [--batches 1,8,32,128,256] [--contexts 1024,4096] [--prefill 1x8192,16x512]\n"
    "         [--decode-steps 16] [--prefill-repeats 2] [--peak-bandwidth-gbs 4300]\n"
    "         [--peak-tflops 790] [--json OUT] [--config FILE] [--backend B] [--set k=v]\n"
    "NAME: llama3-8b, qwen3-8b, qwen3-0.6b (no weights: needs --random-weights); DIR: a model\n"
    "folder (--model DIR is the same). Prints one JSON object: decode ms per step at each batch\n"
    "and context, prefill tokens/s for each SEQSxTOKENS, and each one's roofline fraction.\n";

std::vector<prefill_case> parse_prefill(const std::string& text) {
  std::vector<prefill_case> out;
  std::size_t i = 0;
  while (i <= text.size()) {
    const std::size_t comma = std::min(text.find(',', i), text.size());
    const std::string item = text.substr(i, comma - i);
    const std::size_t x = item.find('x');
    try {
      if (x == std::string::npos) throw std::invalid_argument(item);
      prefill_case c{std::stoll(item.substr(0, x)), std::stoll(item.substr(x + 1))};
      if (c.seqs < 1 || c.tokens < 1) throw std::invalid_argument(item);
      out.push_back(c);
    } catch (const std::exception&) {
      throw usage_error(fmt::format("--prefill: '{}' is not SEQSxTOKENS (e.g. 1x8192)", item));
    }
    i = comma + 1;
  }
  return out;
}

std::vector<std::int64_t> to_int64(const std::vector<unsigned>& v, const char* flag) {
  std::vector<std::int64_t> out;
  for (unsigned x : v) {
    if (x == 0) throw usage_error(fmt::format("{}: values must be positive", flag));
    out.push_back(x);
  }
  return out;
}

}  // namespace

int run_bench_forward(int argc, char** argv) {
  return run_command(
      "bench-forward",
      [&]() -> int {
        args a(argc, argv, 2,
               {"config", "model", "shape", "backend", "seed", "batches", "contexts", "prefill",
                "decode-steps", "prefill-repeats", "peak-bandwidth-gbs", "peak-tflops", "json"},
               {"help", "random-weights"});
        if (a.has("help")) {
          std::fputs(bench_help, stdout);
          return 0;
        }
        bench_forward_options o;
        o.shape = a.get_or("shape", a.get_or("model", ""));
        if (o.shape.empty()) throw usage_error("--shape NAME|DIR is required");
        o.random_weights = a.has("random-weights");
        o.seed = static_cast<std::uint64_t>(a.get_int("seed").value_or(1));
        o.batches = to_int64(parse_id_list(a.get_or("batches", "1,8,32,128,256"), "--batches"),
                             "--batches");
        o.contexts =
            to_int64(parse_id_list(a.get_or("contexts", "1024,4096"), "--contexts"), "--contexts");
        o.prefill = parse_prefill(a.get_or("prefill", "1x8192,16x512"));
        o.decode_steps = a.get_int("decode-steps").value_or(16);
        o.prefill_repeats = a.get_int("prefill-repeats").value_or(2);
        o.peak_bandwidth_gbs = a.get_double("peak-bandwidth-gbs").value_or(4300);
        o.peak_tflops = a.get_double("peak-tflops").value_or(790);
        if (o.decode_steps < 1 || o.prefill_repeats < 1 || o.peak_bandwidth_gbs <= 0 ||
            o.peak_tflops <= 0) {
          throw usage_error(
              "--decode-steps, --prefill-repeats and the peaks must be positive numbers");
        }
        const bool builtin = model::builtin_shape(o.shape).has_value();
        if (builtin && !o.random_weights) {
          throw usage_error(
              fmt::format("--shape {}: a built-in shape has no weights; add "
                          "--random-weights",
                          o.shape));
        }
        const config::server_config cfg = config::load_config(
            a.get_or("config", ""),
            config_sets(a, builtin ? std::nullopt : std::optional<std::string>(o.shape)));

        const nlohmann::json out = run_forward_benchmark(cfg, o);
        const std::string text = out.dump(2);
        std::cout << text << std::endl;
        if (auto path = a.get("json")) {
          std::ofstream f(*path);
          f << text << "\n";
          if (!f) throw std::runtime_error("--json: cannot write " + *path);
        }
        return 0;
      },
      bench_help);
}

}  // namespace courier::cli
