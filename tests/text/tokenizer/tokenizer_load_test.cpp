// Loading: every unsupported component is an error naming itself and the file.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>

#include "tests/text/tokenizer/toy_tokenizer.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_text_tokenizer_tokenizer_load {

using courier::test::toy_tokenizer;
using courier::test::toy_tokenizer_json;
using courier::text::tokenizer;
using courier::text::tokenizer_error;
using nlohmann::json;

namespace {

std::string load_error(const json& j, const std::string& config = "") {
  try {
    toy_tokenizer(j, config);
  } catch (const tokenizer_error& e) {
    return e.what();
  }
  return "(loaded without error)";
}

}  // namespace

TEST_CASE("tokenizer load: the toy tokenizer loads and merges", "[text]") {
  const tokenizer t = toy_tokenizer(toy_tokenizer_json());
  CHECK(t.encode("hello world") == std::vector<std::uint32_t>{259, 264});
  CHECK(t.decode({259, 264}) == "hello world");
  CHECK(t.vocab_size() == 266);
  CHECK(t.id_bound() == 301);
}

TEST_CASE("tokenizer load: an unsupported component names its type and the file", "[text]") {
  json j = toy_tokenizer_json();
  j["pre_tokenizer"] = {{"type", "Whitespace"}};
  CHECK(load_error(j) == "tokenizer.json: unsupported pre_tokenizer type 'Whitespace'");

  j = toy_tokenizer_json();
  j["normalizer"] = {{"type", "Sequence"},
                     {"normalizers", json::array({{{"type", "NFC"}}, {{"type", "Lowercase"}}})}};
  CHECK(load_error(j) == "tokenizer.json: unsupported normalizer type 'Lowercase'");

  j = toy_tokenizer_json();
  j["model"]["type"] = "Unigram";
  CHECK(load_error(j) == "tokenizer.json: unsupported model type 'Unigram'");

  j = toy_tokenizer_json();
  j["decoder"] = {{"type", "WordPiece"}, {"prefix", "##"}};
  CHECK(load_error(j) == "tokenizer.json: unsupported decoder type 'WordPiece'");

  j = toy_tokenizer_json();
  j["post_processor"] = {{"type", "Frobnicate"}};
  CHECK(load_error(j) == "tokenizer.json: unsupported post_processor type 'Frobnicate'");

  j = toy_tokenizer_json();
  j["decoder"] = nullptr;
  CHECK(load_error(j).rfind("tokenizer.json: no decoder", 0) == 0);

  j = toy_tokenizer_json();
  j["model"]["dropout"] = 0.1;
  CHECK(load_error(j) == "tokenizer.json: unsupported BPE option 'dropout' (only null or 0)");

  j = toy_tokenizer_json();
  j["model"]["continuing_subword_prefix"] = "##";
  CHECK(load_error(j) ==
        "tokenizer.json: unsupported BPE option 'continuing_subword_prefix' ('##')");

  j = toy_tokenizer_json();
  j["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers",
       json::array(
           {{{"type", "ByteLevel"}},
            {{"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", "Isolated"}}})}};
  CHECK(load_error(j) == "tokenizer.json: a pre_tokenizer after ByteLevel is not supported");

  j = toy_tokenizer_json();
  j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "(x"}}}};
  CHECK(load_error(j).rfind("tokenizer.json: Split pattern {\"Regex\":\"(x\"}: invalid regex", 0) ==
        0);
}

TEST_CASE("tokenizer load: bad vocabularies and bad JSON are errors naming the file", "[text]") {
  json j = toy_tokenizer_json();
  j["model"]["merges"].push_back("q zz");
  CHECK(load_error(j) == "tokenizer.json: merge 9 ('q zz'): token 'zz' is not in the vocabulary");

  j = toy_tokenizer_json();
  j["model"]["unk_token"] = "<unk>";
  CHECK(load_error(j) == "tokenizer.json: unk_token '<unk>' is not in the vocabulary");

  CHECK_THROWS_WITH(tokenizer::from_json("{not json", ""),
                    Catch::Matchers::StartsWith("tokenizer.json: invalid JSON: "));
  CHECK_THROWS_WITH(tokenizer::from_json(toy_tokenizer_json().dump(), "[1,"),
                    Catch::Matchers::StartsWith("tokenizer_config.json: invalid JSON: "));
  CHECK_THROWS_WITH(tokenizer::load("/nonexistent/dir/tokenizer.json"),
                    "/nonexistent/dir/tokenizer.json: cannot read: No such file or directory");
}

TEST_CASE("tokenizer load: load() names the path it read and reads the config beside it",
          "[text]") {
  const std::string dir = "/tmp/courier_tokenizer_test_" + std::to_string(getpid());
  REQUIRE(system(("mkdir -p " + dir).c_str()) == 0);
  json j = toy_tokenizer_json();
  std::ofstream(dir + "/tokenizer.json") << j.dump();
  std::ofstream(dir + "/tokenizer_config.json")
      << R"({"eos_token": {"content": "<|end|>"}, "clean_up_tokenization_spaces": true,
             "add_bos_token": false})";
  const tokenizer t = tokenizer::load(dir + "/tokenizer.json");
  CHECK(t.special_ids().eos == 300u);
  CHECK(!t.special_ids().bos);
  CHECK(t.config().add_bos_token == false);
  CHECK(t.cleans_up_spaces());

  j["pre_tokenizer"] = {{"type", "Whitespace"}};
  std::ofstream(dir + "/tokenizer.json") << j.dump();
  CHECK_THROWS_WITH(tokenizer::load(dir + "/tokenizer.json"),
                    dir + "/tokenizer.json: unsupported pre_tokenizer type 'Whitespace'");
  std::remove((dir + "/tokenizer.json").c_str());
  std::remove((dir + "/tokenizer_config.json").c_str());
  rmdir(dir.c_str());
}

}  // namespace courier_test_text_tokenizer_tokenizer_load
