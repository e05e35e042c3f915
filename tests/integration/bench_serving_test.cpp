// courier-bench against a courier server on the sim backend: a run of about 20 seconds ends with
// no failed request and figures that equal the server's own /metrics counts, and the
// shared-prefix dataset shows the prefix cache at work (and only when it is on).
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/http_fixture.hpp"
#include "tests/support/runtime_harness.hpp"
#include "tests/support/prometheus_text.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_bench_serving {

using namespace courier;
using nlohmann::json;

namespace {

std::vector<test::prom_sample> scrape(test::server_fixture& srv) {
  const test::reply r = test::curl(srv.url("/metrics"));
  REQUIRE(r.status == 200);
  return test::parse_prometheus(r.body);
}

// Runs courier-bench against `srv` with `flags`; returns its result JSON.
json run_bench(test::server_fixture& srv, const std::string& flags,
               const std::string& model = "tiny-llama3") {
  const std::string out = "/tmp/courier_bench_result_" + std::to_string(::getpid()) + ".json";
  const std::string cmd = std::string(COURIER_BENCH_BINARY) + " --base-url " + srv.url("") +
                          " --tokenizer " + test::model_dir(model) +
                          " --prompt-format ids --seed 7 " +
                          flags + " --result-json " + out;
  const test::command_result r = test::run_command(cmd);
  INFO(cmd << "\n" << r.out << r.err);
  REQUIRE(r.status == 0);
  std::ifstream f(out);
  json j = json::parse(f, nullptr, false);
  std::remove(out.c_str());
  REQUIRE(j.is_object());
  return j;
}

double delta(const std::vector<test::prom_sample>& before,
             const std::vector<test::prom_sample>& after, const std::string& name,
             const std::map<std::string, std::string>& labels = {}) {
  return test::prom_value(after, name, labels) - test::prom_value(before, name, labels);
}

}  // namespace

TEST_CASE("courier-bench: a 20-second Poisson run has no failures and agrees with /metrics",
          "[integration][bench_tool]") {
  config::server_config cfg = test::sim_config("tiny-llama3");
  test::server_fixture srv(cfg);
  const auto before = scrape(srv);
  // 60 prompts at 3 requests/s: Poisson arrivals over about 20 seconds.
  const json res = run_bench(srv,
                             "--dataset-name random --random-input-len 48 --random-output-len 16 "
                             "--random-range-ratio 0.5 --num-prompts 60 --request-rate 3 "
                             "--ignore-eos");
  const auto after = scrape(srv);

  CHECK(res["completed"] == 60);
  CHECK(res["failed"] == 0);
  CHECK(res["duration"].get<double>() > 10.0);
  const auto input = res["total_input_tokens"].get<double>();
  const auto output = res["total_output_tokens"].get<double>();
  // Every request ran to its length (ignore_eos), and the server counted each once.
  CHECK(delta(before, after, "courier:request_success_total", {{"finished_reason", "length"}}) == 60);
  CHECK(delta(before, after, "courier:prompt_tokens_total") == input);
  CHECK(delta(before, after, "courier:generation_tokens_total") == output);
  CHECK(delta(before, after, "courier:prefix_cache_hits_total") ==
        res["cached_tokens"].get<double>());
  CHECK(delta(before, after, "courier:time_to_first_token_seconds_count") == 60);
  // Lengths drawn within the range ratio: output in [8, 24] tokens per request.
  CHECK(output >= 60 * 8);
  CHECK(output <= 60 * 24);
  double sum_out = 0;
  for (const auto& n : res["output_lens"]) sum_out += n.get<double>();
  CHECK(sum_out == output);

  // The client's TTFT is the server's (from HTTP arrival to the first token) plus the network
  // and the parsing on either side: never less, and on loopback not far more.
  const double server_ttft_ms =
      1e3 * delta(before, after, "courier:time_to_first_token_seconds_sum") / 60.0;
  const double client_ttft_ms = res["mean_ttft_ms"].get<double>();
  CHECK(client_ttft_ms >= server_ttft_ms * 0.99);
  CHECK(client_ttft_ms <= server_ttft_ms * 1.5 + 50.0);
  CHECK(res["request_throughput"].get<double>() ==
        Approx(60.0 / res["duration"].get<double>()).epsilon(1e-6));
  CHECK(res["output_throughput"].get<double>() ==
        Approx(output / res["duration"].get<double>()).epsilon(1e-6));
}

TEST_CASE("courier-bench: the shared-prefix dataset is served from the prefix cache when it is on",
          "[integration][bench_tool]") {
  const std::string flags =
      "--dataset-name shared-prefix --gsp-num-groups 4 --gsp-prompts-per-group 6 "
      "--gsp-system-prompt-len 96 --gsp-question-len 16 --gsp-output-len 4 --ignore-eos "
      "--max-concurrency 4";
  double share_on = 0, share_off = 0;
  for (const bool caching : {true, false}) {
    config::server_config cfg = test::sim_config("tiny-llama3");
    cfg.scheduler.prefix_caching = caching;
    test::server_fixture srv(cfg);
    const auto before = scrape(srv);
    const json res = run_bench(srv, flags);
    const auto after = scrape(srv);
    CHECK(res["completed"] == 24);
    CHECK(res["failed"] == 0);
    CHECK(res["total_input_tokens"] == 24 * (96 + 16));
    CHECK(delta(before, after, "courier:prefix_cache_hits_total") ==
          res["cached_tokens"].get<double>());
    (caching ? share_on : share_off) = res["cached_token_share"].get<double>();
  }
  CHECK(share_off == 0.0);
  // At most 4 of 24 requests (one per group) find nothing cached; each later one reuses the
  // 96-token system prompt's 6 full blocks of 16: at least (24 - 4 x 4) x 96 / (24 x 112).
  CHECK(share_on >= 8.0 * 96 / (24 * 112));
  CHECK(share_on < 1.0);
}

TEST_CASE("courier-bench: a hybrid's multi-turn conversations resume each later turn from the "
          "turn before's tail snapshot",
          "[integration][bench_tool]") {
  // 4 conversations of 3 turns: 64-token system prompt, 16-token messages, 20-token answers.
  const std::string flags =
      "--dataset-name multi-turn --mt-conversations 4 --mt-turns 3 --mt-system-prompt-len 64 "
      "--mt-message-len 16 --mt-output-len 20 --ignore-eos --max-concurrency 2";
  for (const bool caching : {true, false}) {
    INFO("prefix caching " << caching);
    config::server_config cfg = test::hybrid_config("tiny-hybrid");
    cfg.scheduler.prefix_caching = caching;
    test::server_fixture srv(cfg);
    const auto before = scrape(srv);
    const json res = run_bench(srv, flags, "tiny-hybrid");
    const auto after = scrape(srv);
    CHECK(res["completed"] == 12);
    CHECK(res["failed"] == 0);
    // Turn t's prompt: 64 + 16 (t + 1) + 20 t tokens: 80, 116, 152 per conversation.
    CHECK(res["total_input_tokens"] == 4 * (80 + 116 + 152));
    const double tails = delta(before, after, "courier:ssm_snapshot_hits_total", {{"kind", "tail"}});
    if (caching) {
      // Each later turn resumes at the last block boundary the answer before reached: turn 1
      // at 96 (of 99 computed), turn 2 at 128 (of 135).
      CHECK(tails == 8);
      CHECK(res["cached_tokens"] == 4 * (96 + 128));
    } else {
      CHECK(tails == 0);
      CHECK(res["cached_tokens"] == 0);
    }
  }
}

}  // namespace courier_test_integration_bench_serving
