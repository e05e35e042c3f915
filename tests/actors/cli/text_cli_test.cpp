// courier tokenize / detokenize / render-chat against the reference fixtures.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/fixtures.hpp"
#include "tests/support/run_command.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_cli_text_cli {

using namespace courier;
using nlohmann::json;

namespace {

json load_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

std::string write_temp(const std::string& name, const std::string& content) {
  const std::string path = "/tmp/courier_cli_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

}  // namespace

TEST_CASE("courier tokenize and detokenize match the reference cases", "[cli][text]") {
  const json cases = load_json(test::data_dir() + "/cases/tokenizer-cases.json")["cases"];
  const std::string tok = test::model_dir("tiny-qwen3") + "/tokenizer.json";
  for (std::size_t i : {std::size_t{3}, std::size_t{40}, std::size_t{120}}) {
    const json& c = cases.at(i);
    const std::string in = write_temp("tok_in", c["text"].get<std::string>());
    const auto r = test::run_command(test::courier_binary() + " tokenize --tokenizer " + tok +
                                     " < " + in);
    INFO("case " << i << ": " << r.err);
    REQUIRE(r.status == 0);
    CHECK(json::parse(r.out) == c["qwen3"]);
    const std::string ids = write_temp("detok_in", c["qwen3"].dump());
    const auto d = test::run_command(test::courier_binary() + " detokenize --tokenizer " + tok +
                                     " < " + ids);
    REQUIRE(d.status == 0);
    CHECK(d.out == c["qwen3_decoded"].get<std::string>());
  }
  const auto bad = test::run_command(test::courier_binary() + " tokenize --tokenizer /nope.json < /dev/null");
  CHECK(bad.status == 1);
  CHECK_THAT(bad.err, Catch::Contains("/nope.json"));
}

TEST_CASE("courier render-chat renders a reference case byte for byte", "[cli][text]") {
  const json all = load_json(test::data_dir() + "/cases/chat-cases.json");
  for (const json& c : all["cases"]) {
    if (!c["error"].is_null()) continue;
    const std::string family = c["family"];
    const std::string tpl = write_temp("tpl_" + family, all["templates"][family].get<std::string>());
    json ctx = {{"messages", c["messages"]}, {"add_generation_prompt", c["add_generation_prompt"]},
                {"bos_token", c["bos_token"]}, {"eos_token", c["eos_token"]}};
    if (c.contains("tools")) ctx["tools"] = c["tools"];
    const std::string ctx_path = write_temp("ctx_" + family, ctx.dump());
    const auto r = test::run_command(test::courier_binary() + " render-chat --template " + tpl +
                                     " --context " + ctx_path);
    INFO(family << ": " << r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out == c["rendered"].get<std::string>());
  }
}

}  // namespace courier_test_actors_cli_text_cli
