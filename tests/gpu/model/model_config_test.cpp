#include "gpu/model/model_config.hpp"

#include <stdlib.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "gpu/dtype.hpp"
#include <nlohmann/json.hpp>

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_model_model_config {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using courier::model::architecture;
using courier::model::layer_kind;
using courier::model::mamba_config;
using courier::model::load_model_config;
using courier::model::model_config;
using courier::model::model_error;
using courier::model::rope_config;
using courier::model::rope_inv_freq;

namespace {

const std::string models_dir = COURIER_TEST_DATA "/models";

// A fresh folder under /tmp, removed with everything in it when the test ends.
struct temp_dir {
  fs::path path;
  temp_dir() {
    std::string tmpl = (fs::temp_directory_path() / "courier_config_XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string dir() const { return path.string(); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  REQUIRE(out.good());
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

nlohmann::json fixture_config(const std::string& model) {
  return read_json(models_dir + "/" + model + "/config.json");
}

// The message of the model_error that f throws; fails the test when it throws nothing.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const model_error& e) {
    return e.what();
  }
  FAIL("expected a model_error");
  return {};
}

// Every error is one line that starts with the file it is about and names the problem.
void check_error(const std::string& message, const std::string& path, const std::string& problem) {
  INFO("message: " << message);
  CHECK_THAT(message, StartsWith(path + ":"));
  CHECK_THAT(message, Contains(problem));
  CHECK(message.find('\n') == std::string::npos);
}

// Writes `config` as DIR/config.json (and no generation_config.json) and loads DIR.
model_config load_written(const temp_dir& tmp, const nlohmann::json& config) {
  write_file(tmp.file("config.json"), config.dump(2));
  return load_model_config(tmp.dir());
}

std::string config_error(const temp_dir& tmp, const nlohmann::json& config) {
  write_file(tmp.file("config.json"), config.dump(2));
  return error_of([&] { load_model_config(tmp.dir()); });
}

// transformers' rope formulas, in double precision, written from the paper's definitions rather
// than from the float32 implementation under test.
std::vector<double> reference_inv_freq(double theta, int head_dim) {
  std::vector<double> out;
  for (int i = 0; i < head_dim / 2; ++i) out.push_back(std::pow(theta, -2.0 * i / head_dim));
  return out;
}

std::vector<double> reference_llama3(const std::vector<double>& inv_freq, double factor,
                                     double low_freq_factor, double high_freq_factor,
                                     double old_context) {
  const double pi = std::acos(-1.0);
  const double low_freq_wavelen = old_context / low_freq_factor;
  const double high_freq_wavelen = old_context / high_freq_factor;
  std::vector<double> out;
  for (double f : inv_freq) {
    const double wavelen = 2 * pi / f;
    if (wavelen < high_freq_wavelen) {
      out.push_back(f);
    } else if (wavelen > low_freq_wavelen) {
      out.push_back(f / factor);
    } else {
      const double smooth =
          (old_context / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
      out.push_back((1 - smooth) * f / factor + smooth * f);
    }
  }
  return out;
}

void check_close(const std::vector<float>& actual, const std::vector<double>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    INFO("i = " << i << ", actual " << actual[i] << ", expected " << expected[i]);
    CHECK(std::abs(actual[i] - expected[i]) <= 1e-6 * std::abs(expected[i]));
  }
}

}  // namespace

TEST_CASE("model config: tiny-qwen3 parses to its architecture", "[model]") {
  const auto c = load_model_config(models_dir + "/tiny-qwen3");
  CHECK(c.arch == architecture::qwen3);
  CHECK(std::string(courier::model::architecture_name(c.arch)) == "qwen3");
  CHECK(c.architecture_name == "Qwen3ForCausalLM");
  CHECK(c.vocab_size == 151936);
  CHECK(c.hidden_size == 64);
  CHECK(c.intermediate_size == 128);
  CHECK(c.num_layers == 3);
  CHECK(c.num_heads == 4);
  CHECK(c.num_kv_heads == 2);
  CHECK(c.head_dim == 64);
  CHECK(c.rms_norm_eps == 1e-6);
  CHECK(c.max_position_embeddings == 40960);
  CHECK(c.tie_word_embeddings);
  CHECK(c.qk_norm);
  CHECK_FALSE(c.qkv_bias);
  CHECK(c.torch_dtype == "bfloat16");
  CHECK(c.rope.type == rope_config::kind::none_default);
  CHECK(c.rope.theta == 1e6);
  // generation_config.json's list wins over config.json's single id.
  CHECK(c.eos_token_ids == std::vector<std::uint32_t>{151645, 151643});
  CHECK(c.bos_token_id == 151643);
}

TEST_CASE("model config: tiny-llama3 reads llama3 rope scaling from rope_parameters", "[model]") {
  const auto c = load_model_config(models_dir + "/tiny-llama3");
  CHECK(c.arch == architecture::llama);
  CHECK(std::string(courier::model::architecture_name(c.arch)) == "llama");
  CHECK(c.architecture_name == "LlamaForCausalLM");
  CHECK(c.vocab_size == 2048);
  CHECK(c.hidden_size == 256);
  CHECK(c.num_layers == 2);
  CHECK(c.num_heads == 2);
  CHECK(c.num_kv_heads == 1);
  CHECK(c.head_dim == 128);
  CHECK(c.rms_norm_eps == 1e-5);
  CHECK_FALSE(c.tie_word_embeddings);
  CHECK_FALSE(c.qkv_bias);
  CHECK_FALSE(c.qk_norm);
  CHECK(c.torch_dtype == "bfloat16");
  CHECK(c.rope.type == rope_config::kind::llama3);
  CHECK(c.rope.theta == 500000.0);
  CHECK(c.rope.factor == 8.0);
  CHECK(c.rope.low_freq_factor == 1.0);
  CHECK(c.rope.high_freq_factor == 4.0);
  CHECK(c.rope.original_max_position == 8192);
  CHECK(c.eos_token_ids == std::vector<std::uint32_t>{2});
  CHECK(c.bos_token_id == 1);
}

TEST_CASE("model config: tiny-qwen2 has q/k/v biases and its theta from rope_parameters",
          "[model]") {
  const auto c = load_model_config(models_dir + "/tiny-qwen2");
  CHECK(c.arch == architecture::qwen2);
  CHECK(std::string(courier::model::architecture_name(c.arch)) == "qwen2");
  CHECK(c.qkv_bias);
  CHECK_FALSE(c.qk_norm);
  CHECK(c.tie_word_embeddings);
  CHECK(c.head_dim == 32);
  CHECK(c.rope.type == rope_config::kind::none_default);
  CHECK(c.rope.theta == 1e6);
}

TEST_CASE("model config: NemotronH's layers and Mamba-2 shapes, Infinity in time_step_limit",
          "[model]") {
  const auto c = load_model_config(models_dir + "/tiny-hybrid");
  CHECK(c.arch == architecture::nemotron_h);
  CHECK(c.architecture_name == "NemotronHForCausalLM");
  REQUIRE(c.hybrid());
  CHECK(c.layers == std::vector<layer_kind>{layer_kind::mamba, layer_kind::attention,
                                            layer_kind::mamba, layer_kind::mlp});
  CHECK(c.num_layers == 4);  // from the list: the config has no num_hidden_layers
  CHECK(c.hidden_size == 128);
  CHECK(c.intermediate_size == 256);
  CHECK(c.num_heads == 4);
  CHECK(c.num_kv_heads == 2);
  CHECK(c.head_dim == 32);
  CHECK(c.rms_norm_eps == 1e-5);  // layer_norm_epsilon
  CHECK_FALSE(c.rotary);
  CHECK_FALSE(c.qkv_bias);
  CHECK_FALSE(c.mlp_bias);
  CHECK_FALSE(c.tie_word_embeddings);
  const mamba_config& m = c.mamba;
  CHECK(m.num_heads == 8);
  CHECK(m.head_dim == 32);
  CHECK(m.state_size == 16);
  CHECK(m.n_groups == 2);
  CHECK(m.conv_kernel == 4);
  CHECK(m.chunk_size == 32);
  CHECK(m.conv_bias);
  CHECK_FALSE(m.proj_bias);
  CHECK(m.time_step_min == 0.001);
  CHECK(m.time_step_limit_low == 0.0);
  CHECK(std::isinf(m.time_step_limit_high));
  // The checkpoint's shapes: in_proj [584, 128], conv1d [320, 1, 4].
  CHECK(m.intermediate() == 256);
  CHECK(m.conv_dim() == 320);
  CHECK(m.in_proj_dim() == 584);
  CHECK(c.eos_token_ids == std::vector<std::uint32_t>{2});
}

TEST_CASE("model config: a NemotronH config's errors name the field", "[model]") {
  temp_dir tmp;
  const std::string path = tmp.file("config.json");
  auto with = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = fixture_config("tiny-hybrid");
    edit(j);
    return config_error(tmp, j);
  };
  check_error(with([](nlohmann::json& j) { j["layers_block_type"][3] = "moe"; }), path,
              "layers_block_type[3] is 'moe': mixture-of-experts layers are not supported yet (a "
              "NemotronH model of Mamba-2, attention and MLP layers is)");
  check_error(with([](nlohmann::json& j) { j["layers_block_type"][1] = "sliding"; }), path,
              "layers_block_type[1] is 'sliding', not a known layer type (mamba or "
              "linear_attention, attention or full_attention, mlp)");
  check_error(with([](nlohmann::json& j) { j["num_hidden_layers"] = 5; }), path,
              "num_hidden_layers is 5, but the layer types list 4 layers");
  check_error(with([](nlohmann::json& j) { j["n_groups"] = 3; }), path,
              "mamba_num_heads (8) is not divisible by n_groups (3)");
  check_error(with([](nlohmann::json& j) { j["mlp_hidden_act"] = "silu"; }), path,
              "mlp_hidden_act 'silu' is not supported (relu2 is)");
  check_error(with([](nlohmann::json& j) { j["mamba_ssm_cache_dtype"] = "bfloat16"; }), path,
              "mamba_ssm_cache_dtype 'bfloat16' is not supported (the SSM state is kept in "
              "float32)");
  check_error(with([](nlohmann::json& j) { j["time_step_limit"][1] = {{"__float__", "nope"}}; }),
              path, R"(field 'time_step_limit[1]' must be a number, got {"__float__":"nope"})");
  check_error(with([](nlohmann::json& j) { j.erase("ssm_state_size"); }), path,
              "missing field 'ssm_state_size'");
  // The older hub configs' pattern: one character a layer, 'E' a mixture of experts.
  nlohmann::json j = fixture_config("tiny-hybrid");
  j.erase("layers_block_type");
  j["hybrid_override_pattern"] = "M*M-";
  CHECK(load_written(tmp, j).layers == load_model_config(models_dir + "/tiny-hybrid").layers);
  j["hybrid_override_pattern"] = "M*E-";
  check_error(config_error(tmp, j), path,
              "hybrid_override_pattern[2] is 'E': mixture-of-experts layers are not supported yet "
              "(a NemotronH model of Mamba-2, attention and MLP layers is)");
}

TEST_CASE("model config: rope_inv_freq applies llama3 scaling as transformers does", "[model]") {
  auto c = load_model_config(models_dir + "/tiny-llama3");
  c.rope.inv_freq_dtype = "float32";  // the exact values; the bf16 buffer is tested below
  const auto inv_freq = rope_inv_freq(c);
  const auto unscaled = reference_inv_freq(500000.0, 128);
  const auto expected = reference_llama3(unscaled, 8.0, 1.0, 4.0, 8192.0);
  check_close(inv_freq, expected);

  // The fixture exercises all three bands: kept, divided by the factor, and smoothed.
  int num_kept = 0, num_divided = 0, num_smoothed = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] == unscaled[i]) {
      ++num_kept;
    } else if (expected[i] == unscaled[i] / 8.0) {
      ++num_divided;
    } else {
      ++num_smoothed;
    }
  }
  CHECK(num_kept > 0);
  CHECK(num_divided > 0);
  CHECK(num_smoothed > 0);
}

TEST_CASE("model config: rope_inv_freq without scaling is theta^(-2i/head_dim)", "[model]") {
  auto c = load_model_config(models_dir + "/tiny-qwen3");
  check_close(rope_inv_freq(c), reference_inv_freq(1e6, 64));
  CHECK(rope_inv_freq(c)[0] == 1.0f);

  c.rope.type = rope_config::kind::linear;
  c.rope.factor = 4.0;
  auto linear = reference_inv_freq(1e6, 64);
  for (double& f : linear) f /= 4.0;
  check_close(rope_inv_freq(c), linear);
}

TEST_CASE("model config: old-style rope_theta and rope_scaling are read", "[model]") {
  temp_dir tmp;
  auto config = fixture_config("tiny-llama3");
  config.erase("rope_parameters");
  config["rope_theta"] = 250000.0;

  SECTION("null rope_scaling is the default rope") {
    config["rope_scaling"] = nullptr;
    const auto c = load_written(tmp, config);
    CHECK(c.rope.type == rope_config::kind::none_default);
    CHECK(c.rope.theta == 250000.0);
  }
  SECTION("rope_scaling with 'type'") {
    config["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
    const auto c = load_written(tmp, config);
    CHECK(c.rope.type == rope_config::kind::linear);
    CHECK(c.rope.factor == 2.0);
    CHECK(c.rope.theta == 250000.0);
  }
  SECTION("rope_scaling with 'rope_type'") {
    config["rope_scaling"] = {{"rope_type", "llama3"},
                              {"factor", 32.0},
                              {"low_freq_factor", 1.0},
                              {"high_freq_factor", 4.0},
                              {"original_max_position_embeddings", 8192}};
    const auto c = load_written(tmp, config);
    CHECK(c.rope.type == rope_config::kind::llama3);
    CHECK(c.rope.factor == 32.0);
  }
  SECTION("no rope_theta anywhere is 10000") {
    config.erase("rope_theta");
    CHECK(load_written(tmp, config).rope.theta == 10000.0);
  }
}

TEST_CASE("model config: absent optional fields take their defaults", "[model]") {
  temp_dir tmp;
  auto config = fixture_config("tiny-qwen2");
  config.erase("num_key_value_heads");
  config["head_dim"] = nullptr;
  config.erase("tie_word_embeddings");
  config.erase("dtype");
  config.erase("bos_token_id");
  config["eos_token_id"] = {7, 8, 7};
  const auto c = load_written(tmp, config);
  CHECK(c.num_kv_heads == c.num_heads);
  CHECK(c.head_dim == 128 / 4);
  CHECK_FALSE(c.tie_word_embeddings);
  CHECK(c.torch_dtype.empty());
  CHECK(c.bos_token_id == -1);
  CHECK(c.eos_token_ids == std::vector<std::uint32_t>{7, 8});
}

TEST_CASE("model config: model_type stands in for a missing architectures list", "[model]") {
  temp_dir tmp;
  auto config = fixture_config("tiny-qwen3");
  config.erase("architectures");
  auto c = load_written(tmp, config);
  CHECK(c.arch == architecture::qwen3);
  CHECK(c.architecture_name == "Qwen3ForCausalLM");

  config["model_type"] = "mistral";
  check_error(config_error(tmp, config), tmp.file("config.json"),
              "unsupported model_type 'mistral'");
  config.erase("model_type");
  check_error(config_error(tmp, config), tmp.file("config.json"), "missing field 'architectures'");
}

TEST_CASE("model config: llama and qwen3 read attention_bias", "[model]") {
  temp_dir tmp;
  auto config = fixture_config("tiny-llama3");
  config["attention_bias"] = true;
  CHECK(load_written(tmp, config).qkv_bias);
  config["attention_bias"] = "yes";
  check_error(config_error(tmp, config), tmp.file("config.json"),
              "field 'attention_bias' must be true or false");
}

TEST_CASE("model config: a missing config.json is an error naming the file", "[model]") {
  temp_dir tmp;
  check_error(error_of([&] { load_model_config(tmp.dir()); }), tmp.file("config.json"),
              "missing file");
}

TEST_CASE("model config: malformed JSON is an error naming the file", "[model]") {
  temp_dir tmp;
  write_file(tmp.file("config.json"), "{\n  \"vocab_size\": 12,\n  \"hidden_size\": \n}");
  check_error(error_of([&] { load_model_config(tmp.dir()); }), tmp.file("config.json"),
              "malformed JSON: [json.exception.parse_error");
  write_file(tmp.file("config.json"), "[1, 2]");
  check_error(error_of([&] { load_model_config(tmp.dir()); }), tmp.file("config.json"),
              "expected a JSON object");
}

TEST_CASE("model config: a bad generation_config.json is an error naming that file", "[model]") {
  temp_dir tmp;
  write_file(tmp.file("generation_config.json"), "{\"eos_token_id\": [1, ");
  check_error(config_error(tmp, fixture_config("tiny-qwen2")), tmp.file("generation_config.json"),
              "malformed JSON");
  write_file(tmp.file("generation_config.json"), R"({"eos_token_id": [1, -2]})");
  check_error(config_error(tmp, fixture_config("tiny-qwen2")), tmp.file("generation_config.json"),
              "field 'eos_token_id' must be at least 0, got -2");
  // A generation_config.json that says nothing about eos leaves config.json's.
  write_file(tmp.file("generation_config.json"), R"({"do_sample": true})");
  CHECK(load_written(tmp, fixture_config("tiny-qwen2")).eos_token_ids ==
        std::vector<std::uint32_t>{2});
}

TEST_CASE("model config: a missing or invalid field is an error naming the field", "[model]") {
  temp_dir tmp;
  const std::string path = tmp.file("config.json");
  auto base = fixture_config("tiny-qwen3");

  auto with = [&](const char* key, nlohmann::json value) {
    auto c = base;
    c[key] = std::move(value);
    return c;
  };
  auto without = [&](const char* key) {
    auto c = base;
    c.erase(key);
    return c;
  };

  check_error(config_error(tmp, without("vocab_size")), path, "missing field 'vocab_size'");
  check_error(config_error(tmp, without("num_hidden_layers")), path,
              "missing field 'num_hidden_layers'");
  check_error(config_error(tmp, with("hidden_size", nullptr)), path, "missing field 'hidden_size'");
  check_error(config_error(tmp, with("hidden_size", "64")), path,
              "field 'hidden_size' must be an integer, got string \"64\"");
  check_error(config_error(tmp, with("hidden_size", 64.5)), path,
              "field 'hidden_size' must be an integer");
  check_error(config_error(tmp, with("intermediate_size", 0)), path,
              "field 'intermediate_size' must be positive, got 0");
  check_error(config_error(tmp, with("num_attention_heads", -4)), path,
              "field 'num_attention_heads' must be positive, got -4");
  check_error(config_error(tmp, with("vocab_size", 1ll << 40)), path,
              "field 'vocab_size' is 1099511627776, larger than 2147483647");
  check_error(config_error(tmp, with("num_key_value_heads", 3)), path,
              "num_attention_heads (4) is not divisible by num_key_value_heads (3)");
  check_error(config_error(tmp, with("head_dim", 63)), path, "head_dim (63) must be even");
  check_error(config_error(tmp, with("rms_norm_eps", 0)), path,
              "field 'rms_norm_eps' must be positive");
  check_error(config_error(tmp, with("rope_theta", "big")), path,
              "field 'rope_theta' must be a number");
  check_error(config_error(tmp, with("tie_word_embeddings", 1)), path,
              "field 'tie_word_embeddings' must be true or false");
  check_error(config_error(tmp, with("architectures", nlohmann::json::array())), path,
              "field 'architectures' must be a non-empty list");
  check_error(config_error(tmp, without("max_position_embeddings")), path,
              "missing field 'max_position_embeddings'");

  auto no_head_dim = with("head_dim", nullptr);
  no_head_dim["num_attention_heads"] = 6;
  no_head_dim["num_key_value_heads"] = 3;
  check_error(config_error(tmp, no_head_dim), path,
              "hidden_size (64) is not divisible by num_attention_heads (6)");
}

TEST_CASE("model config: an unsupported rope type is an error naming it", "[model]") {
  temp_dir tmp;
  const std::string path = tmp.file("config.json");
  auto config = fixture_config("tiny-llama3");

  config["rope_parameters"] = {{"rope_type", "yarn"}, {"rope_theta", 1e6}, {"factor", 4.0}};
  check_error(config_error(tmp, config), path,
              "unsupported rope type 'yarn' in rope_parameters (supported: default, linear, "
              "llama3)");

  config.erase("rope_parameters");
  config["rope_scaling"] = {{"type", "dynamic"}, {"factor", 2.0}};
  check_error(config_error(tmp, config), path, "unsupported rope type 'dynamic' in rope_scaling");

  config["rope_scaling"] = {{"type", "linear"}};
  check_error(config_error(tmp, config), path,
              "missing field 'rope_scaling.factor' (needed by rope type 'linear')");

  config["rope_scaling"] = {{"rope_type", "llama3"},
                            {"factor", 8.0},
                            {"low_freq_factor", 1.0},
                            {"high_freq_factor", 4.0}};
  check_error(config_error(tmp, config), path,
              "missing field 'rope_scaling.original_max_position_embeddings'");

  config["rope_scaling"]["original_max_position_embeddings"] = 8192;
  config["rope_scaling"]["high_freq_factor"] = 1.0;
  check_error(config_error(tmp, config), path, "must be larger than low_freq_factor");

  config["rope_scaling"] = "llama3";
  check_error(config_error(tmp, config), path, "field 'rope_scaling' must be an object");
}

TEST_CASE("model config: inv_freq is held in the dtype transformers loads the folder in",
          "[model]") {
  // config.json "dtype": bfloat16 (transformers 5) -> the buffer is bf16; "torch_dtype" alone
  // (older configs) is not the load default -> f32.
  const auto llama = load_model_config(models_dir + "/tiny-llama3");
  CHECK(llama.rope.inv_freq_dtype == "bfloat16");
  auto exact_cfg = llama;
  exact_cfg.rope.inv_freq_dtype = "float32";
  const auto rounded = rope_inv_freq(llama);
  const auto exact = rope_inv_freq(exact_cfg);
  REQUIRE(rounded.size() == exact.size());
  int differ = 0;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    CHECK(rounded[i] == courier::gpu::bf16_to_f32(courier::gpu::f32_to_bf16(exact[i])));
    differ += rounded[i] != exact[i];
  }
  CHECK(differ > 0);
  CHECK(load_model_config(models_dir + "/tiny-qwen3").rope.inv_freq_dtype == "float32");
  CHECK(load_model_config(models_dir + "/tiny-qwen2").rope.inv_freq_dtype == "bfloat16");
}

}  // namespace courier_test_gpu_model_model_config
