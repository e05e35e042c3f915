// `courier bench-forward` end to end on the sim backend: every case is measured or listed as
// skipped with its reason, the roofline figures follow from the shape, and bad flags are usage
// errors. On the CUDA emulator (courier_emulated), each decode step's work as its runtime counts
// it: kernels, library calls, graph launches and copies.
#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>

#include "tests/support/fixtures.hpp"
#include "tests/support/run_command.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_cli_bench_forward {

using namespace courier;

namespace {

test::command_result bench(const std::string& flags) {
  return test::run_command(test::courier_binary() + " bench-forward --set device.sim.threads=2 " +
                           flags);
}

}  // namespace

TEST_CASE("courier bench-forward: a random-weight shape reports every case with its roofline",
          "[cli]") {
  const std::string dir = test::model_dir("tiny-llama3");
  const auto r = bench("--shape " + dir +
                       " --random-weights --batches 1,3 --contexts 20,70 --prefill 1x48,3x16 "
                       "--decode-steps 2 --prefill-repeats 1 --peak-bandwidth-gbs 100 "
                       "--peak-tflops 2");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto c = model::load_model_config(dir);
  CHECK(j["random_weights"] == true);
  // f32 weights on the sim: 4 bytes a parameter.
  CHECK(j["weight_bytes"].get<double>() == 4.0 * j["parameters"].get<double>());
  REQUIRE(j["decode"].size() == 4);
  for (const auto& d : j["decode"]) {
    INFO(d.dump());
    const double b = d["batch"], ctx = d["context"];
    // Every weight but the untied embedding table, and K and V (f32) of each cached token.
    const double embed = c.tie_word_embeddings ? 0.0 : static_cast<double>(c.vocab_size) * c.hidden_size;
    const double want = (j["parameters"].get<double>() - embed) * 4 +
                        b * ctx * c.num_layers * 2.0 * c.num_kv_heads * c.head_dim * 4;
    CHECK(d["bytes_per_step"].get<double>() == Approx(want).epsilon(1e-12));
    CHECK(d["roofline_ms"].get<double>() == Approx(want / 100e9 * 1e3).epsilon(1e-9));
    CHECK(d["ms_per_step"].get<double>() > 0);
    CHECK(d["roofline_fraction"].get<double>() ==
          Approx(d["roofline_ms"].get<double>() / d["ms_per_step"].get<double>()));
    CHECK(d["tokens_per_s"].get<double>() ==
          Approx(b / d["ms_per_step"].get<double>() * 1e3));
    CHECK_FALSE(d.contains("work_per_step"));  // the sim's ops are not counted
  }
  // The profile of one decode step at batch 1 counts each op the forward pass calls: per layer
  // four linears (the fused qkv, o, the fused gate_up, down), one qkv_rope_kv_write (q/k norm,
  // RoPE and the KV write), one attention, one silu_mul, two residual norms (the first layer's
  // input norm has no residual yet: the one rms_norm; the final norm is the last add_rms_norm);
  // then the lm_head, one gather of the sampled rows, one sample; and the step's metadata goes
  // up in a single upload.
  const auto& prof = j["profile"];
  REQUIRE(prof.is_object());
  CHECK(prof["batch"] == 1);
  std::map<std::string, std::int64_t> calls;
  double sum_ms = 0;
  for (const auto& op : prof["ops"]) {
    calls[op["op"].get<std::string>()] = op["calls"].get<std::int64_t>();
    sum_ms += op["ms"].get<double>();
  }
  const std::int64_t L = c.num_layers;
  CHECK(calls["linear"] == 4 * L + 1);
  CHECK(calls["qkv_rope_kv_write"] == L);
  CHECK(calls["attention"] == L);
  CHECK(calls["silu_mul"] == L);
  CHECK(calls["add_rms_norm"] == 2 * L);
  CHECK(calls["rms_norm"] == 1);
  CHECK(calls["embedding"] == 1);
  CHECK(calls["gather_rows"] == 1);
  CHECK(calls["sample"] == 1);
  CHECK(calls["upload"] == 1);
  for (const char* unfused : {"rope", "kv_write", "head_rms_norm"}) {
    CHECK(calls.count(unfused) == 0);
  }
  CHECK(prof["ops_ms"].get<double>() == Approx(sum_ms));
  // The ops are timed one after another within the step: their sum fits in the step's span.
  CHECK(prof["step_ms"].get<double>() >= prof["ops_ms"].get<double>() - 1e-9);
  CHECK(prof["ops_ms"].get<double>() > 0);

  REQUIRE(j["prefill"].size() == 2);
  CHECK(j["prefill"][0]["tokens"] == 48);
  CHECK(j["prefill"][1]["seqs"] == 3);
  for (const auto& p : j["prefill"]) {
    CHECK(p["tflops"].get<double>() ==
          Approx(p["flops"].get<double>() / p["seconds"].get<double>() / 1e12));
    CHECK(p["roofline_fraction"].get<double>() == Approx(p["tflops"].get<double>() / 2));
  }
}

namespace {

// bench-forward on tiny-llama3 on one emulated H100, decode only.
nlohmann::json emulated_bench(const std::string& flags) {
  const auto r = test::run_command("COURIER_CUDA_EMU_DEVICES=H100 " +
                                   test::courier_emulated_binary() + " bench-forward --shape " +
                                   test::model_dir("tiny-llama3") +
                                   " --backend cuda --batches 1,3 --contexts 20 --prefill 1x8 "
                                   "--decode-steps 1 --prefill-repeats 1 " + flags);
  INFO(r.err);
  REQUIRE(r.status == 0);
  return nlohmann::json::parse(r.out);
}

std::int64_t at(const nlohmann::json& d, const char* part, const char* what) {
  return d["work_per_step"][part][what].get<std::int64_t>();
}

}  // namespace

TEST_CASE("courier bench-forward on the CUDA emulator: each step's work as the runtime counts it",
          "[cli]") {
  const auto eager = emulated_bench("--set engine.graph_max_batch=0");
  const auto graphs = emulated_bench("--set engine.graph_max_batch=2");
  REQUIRE(eager["decode"].size() == 2);
  REQUIRE(graphs["decode"].size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const nlohmann::json& e = eager["decode"][i];
    const nlohmann::json& g = graphs["decode"][i];
    INFO(e.dump() << "\n" << g.dump());
    REQUIRE(e.contains("work_per_step"));
    // Graphs off: everything eager.
    CHECK(e["work_per_step"]["graph_launches"] == 0);
    for (const auto& [kind, n] : e["work_per_step"]["in_graphs"].items()) CHECK(n == 0);
    CHECK(at(e, "eager", "kernels") > 0);
    // One download a step, a fixed-size record per row; the metadata and the sampling
    // parameters go up in a copy each.
    CHECK(at(e, "eager", "copies_d2h") == 1);
    CHECK(at(e, "eager", "bytes_d2h") ==
          e["batch"].get<std::int64_t>() * at(eager["decode"][0], "eager", "bytes_d2h"));
    CHECK(at(e, "eager", "copies_h2d") == 2);
    if (g["batch"] == 1) {
      // Within engine.graph_max_batch: one replay holds the forward pass, its kernels and
      // matmuls those of the same step run op by op.
      CHECK(g["work_per_step"]["graph_launches"] == 1);
      CHECK(at(g, "eager", "library_calls") == 0);
      CHECK(at(g, "in_graphs", "library_calls") == at(e, "eager", "library_calls"));
      CHECK(at(g, "in_graphs", "kernels") > 0);
      CHECK(at(g, "eager", "kernels") + at(g, "in_graphs", "kernels") == at(e, "eager", "kernels"));
      CHECK(at(g, "eager", "copies_d2h") == 1);
      CHECK(at(g, "eager", "copies_h2d") == 2);
    } else {  // above it: op by op, as with graphs off
      CHECK(g["work_per_step"] == e["work_per_step"]);
    }
  }
  // The profile (graphs off) says what each op queued: every linear one cuBLASLt matmul, the
  // metadata's upload one copy up, the sampler one copy down, every other op kernels only.
  const auto c = model::load_model_config(test::model_dir("tiny-llama3"));
  for (const auto& op : eager["profile"]["ops"]) {
    INFO(op.dump());
    const std::string name = op["op"];
    const std::int64_t calls = op["calls"];
    const nlohmann::json& w = op["work"];
    if (name == "linear") {
      CHECK(calls == 4 * c.num_layers + 1);
      CHECK(w["library_calls"] == calls);
      CHECK(w["kernels"] == 0);
    } else if (name == "upload") {
      CHECK(w["copies_h2d"] == calls);
      CHECK(w["kernels"] == 0);
    } else {
      CHECK(w["kernels"].get<std::int64_t>() >= calls);
      CHECK(w["library_calls"] == 0);
      CHECK(w["copies_d2h"] == (name == "sample" ? 1 : 0));
    }
  }
}

TEST_CASE("courier bench-forward: cases beyond the memory are skipped with the reason", "[cli]") {
  // 9 MB of f32 weights and 1.4 MB of workspaces in a 12 MB budget: room for about 50 blocks of
  // 32 KB; batch 64 needs 128.
  const auto r = bench("--shape " + test::model_dir("tiny-llama3") +
                       " --random-weights --batches 1,64 --contexts 16 --prefill 1x16 "
                       "--decode-steps 1 --prefill-repeats 1 --set device.sim.memory_mb=12 "
                       "--set device.memory_fraction=1");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["decode"].size() == 2);
  CHECK(j["decode"][0].contains("ms_per_step"));
  CHECK(j["decode"][1]["skipped"].get<std::string>().find("KV blocks") != std::string::npos);
}

TEST_CASE("courier bench-forward: usage errors name the flag", "[cli]") {
  auto r = bench("--shape llama3-8b");
  CHECK(r.status == 2);
  CHECK(r.err.find("--random-weights") != std::string::npos);
  r = bench("--shape " + test::model_dir("tiny-qwen3") + " --prefill 8k");
  CHECK(r.status == 2);
  CHECK(r.err.find("--prefill: '8k'") != std::string::npos);
  r = bench("--random-weights");
  CHECK(r.status == 2);
  CHECK(r.err.find("--shape") != std::string::npos);
  r = bench("--shape /nonexistent --random-weights");
  CHECK(r.status == 1);
  CHECK(r.err.find("/nonexistent/config.json") != std::string::npos);
  // A hybrid is refused by name, not run into an error about its rows.
  r = bench("--shape " + test::model_dir("tiny-hybrid"));
  CHECK(r.status == 1);
  CHECK(r.err.find("NemotronHForCausalLM: bench-forward measures the Llama family") !=
        std::string::npos);
}

}  // namespace courier_test_actors_cli_bench_forward
