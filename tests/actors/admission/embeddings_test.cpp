// /v1/embeddings' pure parts: what a model folder's sentence-transformers files declare
// (sentence_pooling), a body parsed and tokenized (every input form, the 400s naming their
// field), and the response written (normalized as sentence-transformers' Normalize does; base64
// as OpenAI's: little-endian f32, checked against bytes Python's struct and base64 wrote).
#include <catch2/catch.hpp>

#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "actors/admission/api_error.hpp"
#include "actors/admission/embedding_request.hpp"
#include "actors/admission/sentence_pooling.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/text_assets.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_admission_embeddings {

using namespace courier;
using namespace courier::admission;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A scratch model folder holding only the files written into it.
struct folder {
  fs::path dir = fs::temp_directory_path() /
                 ("courier_pooling_" + std::to_string(::getpid()) + "_" + std::to_string(next()));
  folder() { fs::create_directories(dir); }
  ~folder() { fs::remove_all(dir); }
  void write(const std::string& name, const std::string& text) const {
    fs::create_directories((dir / name).parent_path());
    std::ofstream(dir / name) << text;
  }
  static int next() {
    static int n = 0;
    return n++;
  }
};

const char* modules(bool normalize) {
  return normalize ? R"([
      {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
      {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
      {"idx": 2, "name": "2", "path": "2_Normalize",
       "type": "sentence_transformers.models.Normalize"}])"
                   : R"([
      {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
      {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])";
}

// Qwen3-Embedding's 1_Pooling/config.json, with `mode` the one set.
std::string pooling(const std::string& mode) {
  json c = {{"word_embedding_dimension", 1024},
            {"pooling_mode_cls_token", false},
            {"pooling_mode_mean_tokens", false},
            {"pooling_mode_max_tokens", false},
            {"pooling_mode_mean_sqrt_len_tokens", false},
            {"pooling_mode_weightedmean_tokens", false},
            {"pooling_mode_lasttoken", false},
            {"include_prompt", true}};
  c[mode] = true;
  return c.dump();
}

std::shared_ptr<admission_context> qwen() {
  auto ctx = std::make_shared<admission_context>();
  ctx->model_name = "tiny-qwen3";
  ctx->max_model_len = 64;
  ctx->vocab_size = 151936;
  ctx->hidden_size = 128;
  test::use_shared_text_assets(*ctx, test::model_dir("tiny-qwen3"));
  return ctx;
}

api_error error_of(const json& body, const admission_context& ctx, const std::string& tenant = {}) {
  try {
    parse_embedding_request(body.dump(), ctx, tenant);
  } catch (const api_error& e) {
    return e;
  }
  return api_error(0, "accepted");
}

}  // namespace

TEST_CASE("sentence pooling: last-token pooling, then Normalize or not, is served", "[admission]") {
  folder f;
  f.write("modules.json", modules(true));
  f.write("1_Pooling/config.json", pooling("pooling_mode_lasttoken"));
  sentence_pooling p = read_sentence_pooling(f.dir.string());
  CHECK(p.served);
  CHECK(p.normalize);
  CHECK(p.refusal.empty());
  f.write("modules.json", modules(false));
  p = read_sentence_pooling(f.dir.string());
  CHECK(p.served);
  CHECK_FALSE(p.normalize);
}

TEST_CASE("sentence pooling: what courier cannot pool says why, naming the file and field",
          "[admission]") {
  folder f;
  sentence_pooling p = read_sentence_pooling(f.dir.string());  // a plain causal LM's folder
  CHECK_FALSE(p.served);
  CHECK_THAT(p.refusal, Catch::Contains("modules.json: missing"));
  f.write("modules.json", modules(true));
  f.write("1_Pooling/config.json", pooling("pooling_mode_mean_tokens"));
  p = read_sentence_pooling(f.dir.string());
  CHECK_FALSE(p.served);
  CHECK_THAT(p.refusal, Catch::Contains("1_Pooling/config.json: pooling_mode_lasttoken is not"));
  json both = json::parse(pooling("pooling_mode_lasttoken"));
  both["pooling_mode_cls_token"] = true;
  f.write("1_Pooling/config.json", both.dump());
  CHECK_THAT(read_sentence_pooling(f.dir.string()).refusal,
             Catch::Contains("pooling_mode_cls_token is true"));
  f.write("1_Pooling/config.json", pooling("pooling_mode_lasttoken"));
  json dense = json::parse(modules(true));
  dense.push_back(
      {{"idx", 3}, {"path", "3_Dense"}, {"type", "sentence_transformers.models.Dense"}});
  f.write("modules.json", dense.dump());
  p = read_sentence_pooling(f.dir.string());
  CHECK_FALSE(p.served);
  CHECK_THAT(p.refusal, Catch::Contains("modules.json: [3].type is 'sentence_transformers.models."
                                        "Dense'"));
  f.write("modules.json", "[{");
  p = read_sentence_pooling(f.dir.string());
  CHECK_FALSE(p.served);
  CHECK_THAT(p.refusal, Catch::Contains("modules.json: "));
}

TEST_CASE("embeddings request: every input form, tokenized as completions' prompts",
          "[admission]") {
  const auto ctx = qwen();
  const std::vector<msg::token_id> hello = ctx->tok->encode("Hello there", true);
  embedding_request r = parse_embedding_request(
      json{{"model", "tiny-qwen3"}, {"input", "Hello there"}}.dump(), *ctx, "");
  REQUIRE(r.inputs.size() == 1);
  CHECK(r.inputs[0] == hello);
  CHECK_FALSE(r.base64);
  CHECK(r.adapter.empty());
  r = parse_embedding_request(
      json{{"model", "tiny-qwen3"}, {"input", {"Hello there", "x"}}, {"encoding_format", "base64"}}
          .dump(),
      *ctx, "");
  CHECK(r.inputs.size() == 2);
  CHECK(r.base64);
  r = parse_embedding_request(
      json{{"model", "tiny-qwen3"}, {"input", {{1, 2, 3}, {4}}}, {"dimensions", 128}}.dump(), *ctx,
      "");
  CHECK(r.inputs == std::vector<std::vector<msg::token_id>>{{1, 2, 3}, {4}});
  r = parse_embedding_request(json{{"model", "tiny-qwen3"}, {"input", {5, 6}}}.dump(), *ctx, "");
  CHECK(r.inputs == std::vector<std::vector<msg::token_id>>{{5, 6}});
}

TEST_CASE("embeddings request: a bad body is a 400 naming the field; an unknown model a 404",
          "[admission]") {
  const auto ctx = qwen();
  const json ok = {{"model", "tiny-qwen3"}, {"input", "Hi"}};
  CHECK(error_of(ok, *ctx).status == 0);
  const auto param = [&](json b) { return error_of(b, *ctx).param; };
  json b = ok;
  b.erase("input");
  CHECK(param(b) == "input");
  b = ok;
  b["input"] = json::array();
  CHECK(param(b) == "input");
  b["input"] = {"a", ""};  // an empty string is no prompt
  CHECK(param(b) == "input");
  b["input"] = {1, 151936};
  CHECK(param(b) == "input");
  b = ok;
  b["encoding_format"] = "int8";
  CHECK(param(b) == "encoding_format");
  b = ok;
  b["dimensions"] = 64;
  CHECK(param(b) == "dimensions");
  b = ok;
  b["input"] = std::vector<int>(64, 7);  // max_model_len tokens: one more than an input may have
  const api_error too_long = error_of(b, *ctx);
  CHECK(too_long.param == "input");
  CHECK(too_long.code == "context_length_exceeded");
  b["input"] = std::vector<int>(63, 7);
  CHECK(error_of(b, *ctx).status == 0);
  b = ok;
  b["input"] = std::vector<std::string>(max_embedding_inputs + 1, "x");
  CHECK(param(b) == "input");
  b = ok;
  b["model"] = "gpt-9";
  CHECK(error_of(b, *ctx).status == 404);
  ctx->tenant_models = {{"team-b", {"other"}}};
  CHECK(error_of(ok, *ctx, "team-b").status == 404);  // a model this key may not use
}

TEST_CASE("embeddings response: OpenAI's list, normalized as asked, base64 as little-endian f32",
          "[admission]") {
  const json whole =
      json::parse(embeddings_body("m", {{3.0f, 4.0f}, {0.0f, 0.0f}}, true, false, 7));
  CHECK(whole["object"] == "list");
  CHECK(whole["model"] == "m");
  CHECK(whole["usage"] == json{{"prompt_tokens", 7}, {"total_tokens", 7}});
  REQUIRE(whole["data"].size() == 2);
  CHECK(whole["data"][0]["object"] == "embedding");
  CHECK(whole["data"][1]["index"] == 1);
  CHECK(whole["data"][0]["embedding"] == json{0.6f, 0.8f});
  CHECK(whole["data"][1]["embedding"] == json{0.0f, 0.0f});  // a zero vector stays zero
  const json raw = json::parse(embeddings_body("m", {{3.0f, 4.0f}}, false, false, 1));
  CHECK(raw["data"][0]["embedding"] == json{3.0f, 4.0f});
  // struct.pack('<2f', 1.0, -2.0) and ('<3f', 0.5, 0.25, 3.0), base64-encoded by Python.
  const json b64 =
      json::parse(embeddings_body("m", {{1.0f, -2.0f}, {0.5f, 0.25f, 3.0f}}, false, true, 1));
  CHECK(b64["data"][0]["embedding"] == "AACAPwAAAMA=");
  CHECK(b64["data"][1]["embedding"] == "AAAAPwAAgD4AAEBA");
}

}  // namespace courier_test_actors_admission_embeddings
