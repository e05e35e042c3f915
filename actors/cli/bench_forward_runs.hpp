#pragma once
// The measurements of `courier bench-forward`: a model (a folder's weights or random ones on a
// built-in or folder shape) on the configured backend, decode steps at each batch and context,
// and prefills, each against its roofline.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "actors/config/config.hpp"

namespace courier::cli {

struct prefill_case {
  std::int64_t seqs = 1;
  std::int64_t tokens = 1;  // per sequence, from position 0
};

struct bench_forward_options {
  std::string shape;  // a built-in shape name or a model folder
  bool random_weights = false;
  std::uint64_t seed = 1;
  std::vector<std::int64_t> batches, contexts;
  std::vector<prefill_case> prefill;
  std::int64_t decode_steps = 16;     // timed decode steps per (batch, context), after 2 warm-up
  std::int64_t prefill_repeats = 2;   // timed prefills per case, after 1 warm-up
  double peak_bandwidth_gbs = 4300;   // the H200's HBM, measured with a copy kernel
  double peak_tflops = 790;           // the H200's dense bf16, measured with cuBLAS
};

// Runs every case that fits in the device's memory (the others are listed with the reason) and
// returns the report. The KV cache is zeros for decode: attention's cost does not depend on the
// values, so contexts are not prefilled first. Throws on a bad model or device.
nlohmann::json run_forward_benchmark(const config::server_config& cfg,
                                     const bench_forward_options& o);

}  // namespace courier::cli
