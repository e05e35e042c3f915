// courier-bench's command line and base URL: defaults, values, and errors that name the flag.
#include <catch2/catch.hpp>
#include <cmath>

#include "tools/bench/base_url.hpp"
#include "tools/bench/options.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_tools_bench_options {

namespace {

using namespace courier::bench_tool;

std::string error_of(const std::vector<std::string>& args) {
  try {
    parse_options(args);
  } catch (const usage_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("bench options: defaults are vLLM's and values are read in both forms", "[bench_tool]") {
  const auto d = parse_options({"--vocab-size", "100"});
  CHECK(d.base_url == "http://127.0.0.1:8000");
  CHECK(d.endpoint == "/v1/completions");
  CHECK(d.num_prompts == 1000);
  CHECK(std::isinf(d.request_rate));
  CHECK(d.max_concurrency == 0);
  CHECK(d.random_input_len == 1024);
  CHECK(d.random_output_len == 128);
  CHECK(d.timeout_s == 600);
  CHECK(d.metric_percentiles == std::vector<double>{99});

  const auto o = parse_options({"--vocab-size=100", "--request-rate", "2.5", "--max-concurrency=4",
                                "--dataset-name", "shared-prefix", "--ignore-eos", "--seed", "9",
                                "--metric-percentiles", "50,90,99.9"});
  CHECK(o.request_rate == 2.5);
  CHECK(o.max_concurrency == 4);
  CHECK(o.dataset == dataset_kind::shared_prefix);
  CHECK(o.ignore_eos);
  CHECK(o.seed == 9);
  CHECK(o.metric_percentiles == std::vector<double>{50, 90, 99.9});
  CHECK(parse_options({"--help"}).help);
}

TEST_CASE("bench options: a bad flag is an error that names it", "[bench_tool]") {
  CHECK_THAT(error_of({"--vocab-size", "9", "--bogus"}), Catch::Contains("--bogus"));
  CHECK_THAT(error_of({"--vocab-size", "9", "--num-prompts", "0"}),
             Catch::Contains("--num-prompts"));
  CHECK_THAT(error_of({"--vocab-size", "9", "--request-rate", "fast"}),
             Catch::Contains("--request-rate"));
  CHECK_THAT(error_of({"--vocab-size", "9", "--random-range-ratio", "1"}),
             Catch::Contains("--random-range-ratio"));
  CHECK_THAT(error_of({"--vocab-size", "9", "--timeout-s"}), Catch::Contains("--timeout-s"));
  CHECK_THAT(error_of({"--vocab-size", "9", "--prompt-format", "text"}),
             Catch::Contains("--tokenizer"));
  CHECK_THAT(error_of({}), Catch::Contains("--vocab-size"));
  CHECK_THAT(error_of({"--vocab-size", "9", "--base-url", "https://x"}),
             Catch::Contains("--base-url"));
  CHECK_THAT(error_of({"--vocab-size", "9", "--metric-percentiles", "50,101"}),
             Catch::Contains("--metric-percentiles"));
  CHECK_THAT(error_of({"--vocab-size", "9", "--ignore-eos=yes"}), Catch::Contains("--ignore-eos"));
}

TEST_CASE("bench base url: host, port and prefix", "[bench_tool]") {
  const auto a = parse_base_url("http://localhost:8000/");
  CHECK(a.host == "localhost");
  CHECK(a.port == "8000");
  CHECK(a.prefix.empty());
  CHECK(a.target("/v1/completions") == "/v1/completions");
  CHECK(a.host_header() == "localhost:8000");

  const auto b = parse_base_url("http://[::1]:9/proxy/");
  CHECK(b.host == "::1");
  CHECK(b.port == "9");
  CHECK(b.target("/v1/models") == "/proxy/v1/models");
  CHECK(b.host_header() == "[::1]:9");

  CHECK(parse_base_url("http://h").port == "80");
  CHECK_THROWS(parse_base_url("https://h:1"));
  CHECK_THROWS(parse_base_url("http://:80"));
  CHECK_THROWS(parse_base_url("http://h:99999"));
  CHECK_THROWS(parse_base_url("http://h:x"));
}

}  // namespace courier_test_tools_bench_options
