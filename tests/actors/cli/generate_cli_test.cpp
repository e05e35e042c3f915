// `courier generate` end to end: the binary, its JSON line, its errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/support/fixtures.hpp"
#include "tests/support/run_command.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_cli_generate_cli {

using namespace courier;

namespace {

std::string ids_arg(const std::vector<model::token_id>& ids) {
  std::string s;
  for (auto t : ids) s += (s.empty() ? "" : ",") + std::to_string(t);
  return s;
}

}  // namespace

TEST_CASE("courier generate: greedy output matches the transformers reference", "[cli]") {
  for (const std::string name : {"tiny-llama3", "tiny-hybrid"}) {
    INFO(name);
    test::reference ref(name);
    const int p = ref.i32("g0.prompt")[0];
    const auto prompt = ref.ids("p" + std::to_string(p) + ".ids");
    const auto r = test::run_command(test::courier_binary() + " generate --model " +
                                     test::model_dir(name) + " --prompt-ids " +
                                     ids_arg(prompt) + " --max-tokens 32 --ignore-eos");
    INFO(r.err);
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["id"] == "gen-0");
    CHECK(j["finish_reason"] == "length");
    const auto got = j["token_ids"].get<std::vector<model::token_id>>();
    const auto want = ref.ids("g0.f32.ids");
    const auto margins = ref.f32("g0.f32.margins");
    REQUIRE(got.size() == 32);
    int compared = 0;
    for (std::size_t i = 0; i < want.size() && margins[i] >= 1e-3f; ++i, ++compared) {
      CHECK(got[i] == want[i]);
    }
    CHECK(compared > 0);
  }
}

TEST_CASE("courier generate: a seeded sampling run is reproducible and the seed matters", "[cli]") {
  const std::string base = test::courier_binary() + " generate --model " +
                           test::model_dir("tiny-qwen2") +
                           " --prompt-ids 5,6,7 --max-tokens 24 --ignore-eos --temperature 1.0"
                           " --top-p 0.95 --logprobs 2 --seed ";
  const auto a = test::run_command(base + "11");
  const auto b = test::run_command(base + "11");
  const auto c = test::run_command(base + "12");
  REQUIRE(a.status == 0);
  REQUIRE(c.status == 0);
  const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out),
             jc = nlohmann::json::parse(c.out);
  CHECK(ja["token_ids"] == jb["token_ids"]);
  CHECK(ja["token_ids"] != jc["token_ids"]);
  REQUIRE(ja["logprobs"].size() == 24);
  CHECK(ja["logprobs"][0]["top_logprobs"].size() == 2);
}

TEST_CASE("courier generate: a stop token id ends the output with finish_reason stop", "[cli]") {
  // The reference's first greedy token, made a stop id, must be the only token emitted.
  test::reference ref("tiny-qwen2");
  const int p = ref.i32("g0.prompt")[0];
  const auto prompt = ref.ids("p" + std::to_string(p) + ".ids");
  const auto first = ref.ids("g0.f32.ids")[0];
  const auto r = test::run_command(test::courier_binary() + " generate --model " +
                                   test::model_dir("tiny-qwen2") + " --prompt-ids " +
                                   ids_arg(prompt) + " --max-tokens 8 --stop-ids " +
                                   std::to_string(first));
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["finish_reason"] == "stop");
  CHECK(j["token_ids"] == nlohmann::json::array({first}));
}

TEST_CASE("courier generate: --min-tokens holds the stop token id back that long", "[cli]") {
  // The reference's first greedy token, a stop id, may not come before 3 tokens.
  test::reference ref("tiny-qwen2");
  const int p = ref.i32("g0.prompt")[0];
  const auto prompt = ref.ids("p" + std::to_string(p) + ".ids");
  const auto first = ref.ids("g0.f32.ids")[0];
  const std::string cmd = test::courier_binary() + " generate --model " +
                          test::model_dir("tiny-qwen2") + " --prompt-ids " + ids_arg(prompt) +
                          " --max-tokens 8 --stop-ids " + std::to_string(first);
  const auto r = test::run_command(cmd + " --min-tokens 3");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  const std::vector<std::uint32_t> ids = j["token_ids"].get<std::vector<std::uint32_t>>();
  REQUIRE(ids.size() >= 3);
  CHECK(std::find(ids.begin(), ids.begin() + 3, first) == ids.begin() + 3);
  if (j["finish_reason"] == "stop") CHECK(ids.back() == first);
  const auto over = test::run_command(cmd + " --min-tokens 9");
  CHECK(over.status == 1);
  CHECK(over.err.find("min_tokens must be in [0, max_tokens = 8], got 9") != std::string::npos);
}

TEST_CASE("courier generate: bad input is a one-line error, not a crash", "[cli]") {
  const std::string bin = test::courier_binary() + " generate";
  SECTION("an unknown architecture is named, with its config") {
    const std::string dir =
        (std::filesystem::temp_directory_path() / "courier_generate_unknown_arch").string();
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/config.json") << R"({"architectures": ["MixtralForCausalLM"]})";
    const auto r = test::run_command(bin + " --model " + dir + " --prompt-ids 1,2");
    std::filesystem::remove_all(dir);
    CHECK(r.status == 1);
    CHECK(r.err.find("MixtralForCausalLM") != std::string::npos);
    CHECK(r.err.find("config.json") != std::string::npos);
  }
  SECTION("a missing folder is named") {
    const auto r = test::run_command(bin + " --model /nonexistent/model --prompt-ids 1,2");
    CHECK(r.status == 1);
    CHECK(r.err.find("/nonexistent/model") != std::string::npos);
  }
  SECTION("malformed prompt ids are a usage error") {
    const auto r = test::run_command(bin + " --model " + test::model_dir("tiny-qwen2") +
                                     " --prompt-ids 1,x");
    CHECK(r.status == 2);
    CHECK(r.err.find("--prompt-ids") != std::string::npos);
  }
  SECTION("a token id outside the vocabulary is rejected") {
    const auto r = test::run_command(bin + " --model " + test::model_dir("tiny-qwen2") +
                                     " --prompt-ids 1,99999");
    CHECK(r.status == 1);
    CHECK(r.err.find("99999") != std::string::npos);
  }
  SECTION("an unknown config key in --set is named") {
    const auto r = test::run_command(bin + " --model " + test::model_dir("tiny-qwen2") +
                                     " --prompt-ids 1 --set scheduler.max_batched_tokns=8");
    CHECK(r.status == 1);
    CHECK(r.err.find("scheduler.max_batched_tokns") != std::string::npos);
  }
  SECTION("a prompt at max_model_len is rejected") {
    const auto r = test::run_command(bin + " --model " + test::model_dir("tiny-qwen2") +
                                     " --prompt-ids 1,2,3,4 --set model.max_model_len=4");
    CHECK(r.status == 1);
    CHECK(r.err.find("max_model_len") != std::string::npos);
  }
}

}  // namespace courier_test_actors_cli_generate_cli
