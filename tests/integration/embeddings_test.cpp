// POST /v1/embeddings end to end (HTTP, scheduler, engine, model) on tiny-qwen3 wrapped as a
// sentence-transformers last-token model: each embedding, projected through the model's tied
// lm_head on the host, gives the logits transformers computed for that prompt (the fixtures'
// last_logits, within their tolerance), so it is the last position's final hidden state; with a
// Normalize module the vectors are the same ones at unit length; a plain causal LM's folder
// answers 404 saying why; the scheduler gets every block back.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpu/dtype.hpp"
#include "gpu/model/safetensors.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/http_fixture.hpp"
#include "tests/support/reference_checks.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_embeddings {

using namespace courier;
using nlohmann::json;
using test::curl;
using test::server_fixture;
namespace fs = std::filesystem;

namespace {

// tiny-qwen3's files (linked) plus sentence-transformers' modules: last-token pooling, with or
// without Normalize.
struct embedding_folder {
  fs::path dir;
  explicit embedding_folder(bool normalize)
      : dir(fs::temp_directory_path() /
            ("courier_embed_" + std::to_string(::getpid()) + (normalize ? "_n" : "_raw"))) {
    fs::remove_all(dir);
    fs::create_directories(dir / "1_Pooling");
    const fs::path from = fs::absolute(test::model_dir("tiny-qwen3"));
    for (const auto& f : fs::directory_iterator(from)) {
      fs::create_symlink(f.path(), dir / f.path().filename());
    }
    json modules = {{{"idx", 0},
                     {"name", "0"},
                     {"path", ""},
                     {"type", "sentence_transformers.models.Transformer"}},
                    {{"idx", 1},
                     {"name", "1"},
                     {"path", "1_Pooling"},
                     {"type", "sentence_transformers.models.Pooling"}}};
    if (normalize) {
      modules.push_back({{"idx", 2},
                         {"name", "2"},
                         {"path", "2_Normalize"},
                         {"type", "sentence_transformers.models.Normalize"}});
    }
    std::ofstream(dir / "modules.json") << modules.dump();
    std::ofstream(dir / "1_Pooling" / "config.json") << json{
        {"word_embedding_dimension", 64},
        {"pooling_mode_lasttoken", true},
        {"pooling_mode_mean_tokens", false},
        {"include_prompt", true}}.dump();
  }
  ~embedding_folder() { fs::remove_all(dir); }
};

config::server_config config_for(const std::string& dir) {
  config::server_config c = test::sim_config("tiny-qwen3");
  c.model.path = dir;
  c.model.served_name = "tiny-qwen3";
  return c;
}

std::vector<std::vector<float>> embeddings_of(const test::reply& r) {
  std::vector<std::vector<float>> out;
  const json body = r.j();
  for (const json& d : body["data"]) out.push_back(d["embedding"].get<std::vector<float>>());
  return out;
}

}  // namespace

TEST_CASE(
    "embeddings: each is the prompt's last hidden state (through lm_head: transformers' "
    "logits); Normalize scales it to unit length",
    "[integration][http]") {
  test::reference ref("tiny-qwen3");
  json inputs = json::array();
  for (int p = 0; p < ref.num_prompts(); ++p)
    inputs.push_back(ref.ids("p" + std::to_string(p) + ".ids"));
  const json body = {{"model", "tiny-qwen3"}, {"input", inputs}};

  embedding_folder raw_folder(false);
  std::vector<std::vector<float>> raw;
  {
    server_fixture s(config_for(raw_folder.dir.string()));
    const test::reply r = curl(s.url("/v1/embeddings"), body.dump());
    INFO(r.body);
    REQUIRE(r.status == 200);
    CHECK(r.j()["object"] == "list");
    std::int64_t tokens = 0;
    for (const json& in : inputs) tokens += static_cast<std::int64_t>(in.size());
    CHECK(r.j()["usage"]["prompt_tokens"] == tokens);
    raw = embeddings_of(r);
    const msg::scheduler_stats st = s.stats();
    CHECK(st.num_free_blocks + st.num_cached_blocks == st.num_total_blocks);
  }
  REQUIRE(raw.size() == inputs.size());
  const auto file =
      model::safetensors_file::open(test::model_dir("tiny-qwen3") + "/model.safetensors");
  const gpu::host_tensor& w = file.tensor("model.embed_tokens.weight");  // tied: lm_head
  for (std::size_t p = 0; p < raw.size(); ++p) {
    INFO("prompt " << p);
    CHECK(test::projected_logits_error(
              w, raw[p], ref.f32("p" + std::to_string(p) + ".f32.last_logits")) <= 2e-3);
  }

  embedding_folder unit_folder(true);
  server_fixture s(config_for(unit_folder.dir.string()));
  const std::vector<std::vector<float>> unit =
      embeddings_of(curl(s.url("/v1/embeddings"), body.dump()));
  REQUIRE(unit.size() == raw.size());
  for (std::size_t p = 0; p < unit.size(); ++p) {
    double norm = 0;
    for (float x : raw[p]) norm += static_cast<double>(x) * x;
    norm = std::sqrt(norm);
    double unit_norm = 0, worst = 0;
    for (std::size_t i = 0; i < unit[p].size(); ++i) {
      unit_norm += static_cast<double>(unit[p][i]) * unit[p][i];
      worst = std::max(worst, std::abs(unit[p][i] * norm - raw[p][i]));
    }
    CHECK(std::abs(unit_norm - 1.0) < 1e-5);
    CHECK(worst < 1e-5 * norm);
  }
}

TEST_CASE(
    "embeddings: a causal LM's folder (no sentence-transformers pooling) answers 404 "
    "saying why",
    "[integration][http]") {
  server_fixture s(test::sim_config("tiny-qwen3"));
  const test::reply r = curl(s.url("/v1/embeddings"), R"({"model": "tiny-qwen3", "input": "Hi"})");
  CHECK(r.status == 404);
  CHECK_THAT(r.j()["error"]["message"].get<std::string>(),
             Catch::Contains("modules.json: missing"));
}

}  // namespace courier_test_integration_embeddings
