// LoRA adapters on the sim backend against the same model with the adapter merged into its
// weights by tests/lora/make-lora.mjs (W + scale * B A, f32), under the f32 rule of
// tests/data/FIXTURES.md; batches mixing adapters against each row alone, bit for bit.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include "gpu/model/generate_one.hpp"
#include "gpu/model/json_file.hpp"
#include "gpu/model/lora_adapter.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/lora_fixture.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_model_lora {

using namespace courier;

namespace {

constexpr std::int32_t max_rank = 16;

// Every position's logits of `prompt` in one pass, with the model's LoRA slot `slot`.
std::vector<float> all_logits(model::llama_model& m, const std::vector<model::token_id>& prompt,
                              std::int32_t slot) {
  const auto blocks = static_cast<std::int32_t>((prompt.size() + 15) / 16);
  model::kv_cache cache(m.device(), m.config(), blocks, 16);
  model::forward_batch fb;
  fb.return_logits = true;
  model::forward_row row;
  row.tokens = prompt;
  row.block_table = test::iota_table(blocks);
  row.logits = model::logits_mode::all;
  if (m.config().hybrid()) row.state_slot = 0;
  row.lora_slot = slot;
  fb.rows.push_back(row);
  test::in_slots(m, fb, 16);
  return m.forward(fb, cache).rows[0].logits;
}

// The top k ids of v, best first (ties: the lower id), in one pass.
std::vector<std::size_t> top(const float* v, std::size_t n, std::size_t k) {
  std::vector<std::size_t> ids;
  for (std::size_t i = 0; i < n; ++i) {
    if (ids.size() == k && v[i] <= v[ids.back()]) continue;
    auto at = ids.end();
    while (at != ids.begin() && v[*(at - 1)] < v[i]) --at;
    ids.insert(at, i);
    if (ids.size() > k) ids.pop_back();
  }
  return ids;
}

// The adapter in slot 1 of the base model against the merged model, on every reference prompt
// and greedy run of the fixture; and both against the base.
void check_against_merged(const std::string& name, const std::string& args) {
  const test::lora_fixture fx(name, args);
  test::sim_model base(name);
  const auto dev2 = gpu::make_sim_device(2, 1024);
  const auto merged = model::llama_model::load(fx.merged(), *dev2);
  const auto adapter = model::load_lora_adapter("a", fx.adapter(), base.model->config(), max_rank);
  base.model->reserve_loras(3, max_rank);
  base.model->load_lora(1, *adapter);
  test::reference ref(name);
  const auto V = static_cast<std::size_t>(base.model->config().vocab_size);
  double moved = 0;  // the largest change the adapter makes to a logit
  int top_compared = 0;
  for (int p = 0; p < ref.num_prompts(); ++p) {
    const auto prompt = ref.ids("p" + std::to_string(p) + ".ids");
    // Every position's logits over a 151,936-word vocabulary cost seconds per run for the
    // 300-token prompt (tiny-qwen3): prompts past 16M logits are left to the greedy runs.
    if (prompt.size() * V > (std::size_t{1} << 24)) continue;
    INFO(name << " prompt " << p << " (" << prompt.size() << " tokens)");
    const auto got = all_logits(*base.model, prompt, 1);
    const auto want = all_logits(*merged, prompt, -1);
    const auto plain = p == 0 ? all_logits(*base.model, prompt, -1) : want;
    REQUIRE(got.size() == prompt.size() * V);
    REQUIRE(want.size() == got.size());
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want[i]) /
                                  std::max(1.0, std::abs(static_cast<double>(want[i]))));
      moved = std::max(moved, std::abs(static_cast<double>(want[i]) - plain[i]));
    }
    CHECK(worst <= 2e-3);  // every logit at every position, not only the last
    // Top-5 in order wherever the merged model's neighbouring ranks are more than twice the
    // tolerance apart.
    for (std::size_t pos = 0; pos < prompt.size(); ++pos) {
      const float* w = want.data() + pos * V;
      const auto ids_want = top(w, V, 6), ids_got = top(got.data() + pos * V, V, 5);
      for (std::size_t k = 0; k < 5; ++k) {
        const bool apart = w[ids_want[k]] - w[ids_want[k + 1]] > 4e-3f &&
                           (k == 0 || w[ids_want[k - 1]] - w[ids_want[k]] > 4e-3f);
        if (!apart) continue;
        INFO("position " << pos << " rank " << k);
        CHECK(ids_got[k] == ids_want[k]);
        ++top_compared;
      }
    }
  }
  CHECK(top_compared > 0);
  CHECK(moved > 0.1);  // the adapter changes the model

  // Greedy runs: equal up to the first step whose merged margin is under 1e-3; and different
  // from the base model's for some prompt.
  model::kv_cache c1(base.model->device(), base.model->config(), 64, 16);
  model::kv_cache c2(*dev2, merged->config(), 64, 16);
  int differs = 0, compared = 0;
  for (int g = 0; g < ref.num_greedy(); ++g) {
    model::generate_request req;
    req.prompt =
        ref.ids("p" + std::to_string(ref.i32("g" + std::to_string(g) + ".prompt")[0]) + ".ids");
    req.max_tokens = 32;
    req.ignore_eos = true;
    req.sampling.num_logprobs = 2;
    const auto want = model::generate_one(*merged, c2, req);
    const auto plain = model::generate_one(*base.model, c1, req).tokens;
    req.lora_slot = 1;
    const auto got = model::generate_one(*base.model, c1, req).tokens;
    REQUIRE(got.size() == 32);
    for (std::size_t i = 0; i < 32; ++i) {
      const auto& lp = want.samples[i].top_logprobs;
      if (lp.size() < 2 || lp[0] - lp[1] < 1e-3f) break;
      INFO(name << " greedy run " << g << " step " << i);
      REQUIRE(got[i] == want.tokens[i]);
      ++compared;
    }
    if (plain != want.tokens) ++differs;
  }
  CHECK(compared > 0);
  CHECK(differs > 0);
}

}  // namespace

TEST_CASE("lora: tiny-qwen3 with a rank-8 adapter on every projection equals the merged model",
          "[lora][sim]") {
  check_against_merged("tiny-qwen3",
                       "--seed 1 --rank 8 --alpha 16 --targets "
                       "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj");
}

TEST_CASE("lora: tiny-llama3 with a bf16 rsLoRA adapter of rank 4 equals the merged model",
          "[lora][sim]") {
  check_against_merged("tiny-llama3",
                       "--seed 2 --rank 4 --alpha 8 --rslora --adapter-dtype bf16 "
                       "--targets q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,"
                       "down_proj");
}

TEST_CASE("lora: tiny-qwen2 with q and v of one layer at rank 16 equals the merged model",
          "[lora][sim]") {
  check_against_merged(
      "tiny-qwen2", "--seed 3 --rank 16 --alpha 32 --targets q_proj,v_proj --layers 1 --delta 0.6");
}

TEST_CASE("lora: tiny-hybrid with Mamba, attention and MLP projections equals the merged model",
          "[lora][sim]") {
  check_against_merged("tiny-hybrid",
                       "--seed 4 --rank 8 --alpha 16 --targets "
                       "q_proj,k_proj,v_proj,o_proj,up_proj,down_proj,in_proj,"
                       "out_proj");
}

TEST_CASE("lora: a batch mixing three adapters and the base equals each row alone, bit for bit",
          "[lora][sim]") {
  const test::lora_fixture a("tiny-llama3", "--seed 11 --rank 4 --alpha 8 --targets q_proj,v_proj");
  const test::lora_fixture b(
      "tiny-llama3", "--seed 12 --rank 16 --alpha 16 --targets gate_proj,up_proj,down_proj");
  const test::lora_fixture c("tiny-llama3",
                             "--seed 13 --rank 8 --alpha 32 --rslora --targets "
                             "q_proj,k_proj,v_proj,o_proj,down_proj");
  test::sim_model sm("tiny-llama3");
  test::sim_model plain("tiny-llama3");  // no LoRA pool at all
  model::llama_model& m = *sm.model;
  m.reserve_loras(4, max_rank);
  const test::lora_fixture* fx[] = {&a, &b, &c};
  for (std::int32_t s = 0; s < 3; ++s) {
    m.load_lora(s, *model::load_lora_adapter("x", fx[s]->adapter(), m.config(), max_rank));
  }
  test::reference ref("tiny-llama3");
  // Rows of different prompts, each its slot, prefill chunks of the same step.
  const std::int32_t slots[] = {0, -1, 1, 2};
  std::vector<std::vector<model::token_id>> prompts;
  for (int p = 0; p < 4; ++p) prompts.push_back(ref.ids("p" + std::to_string(p + 1) + ".ids"));
  model::kv_cache cache(m.device(), m.config(), 64, 16);
  model::forward_batch fb;
  fb.return_logits = true;
  std::int32_t next = 0;
  for (int r = 0; r < 4; ++r) {
    model::forward_row row;
    row.tokens = prompts[r];
    const auto blocks = static_cast<std::int32_t>((prompts[r].size() + 15) / 16);
    row.block_table = test::iota_table(blocks, next);
    next += blocks;
    row.logits = model::logits_mode::all;
    row.lora_slot = slots[r];
    fb.rows.push_back(row);
  }
  test::in_slots(m, fb, 16);
  const auto mixed = m.forward(fb, cache);
  for (int r = 0; r < 4; ++r) {
    INFO("row " << r << " (slot " << slots[r] << ")");
    CHECK(mixed.rows[r].logits == all_logits(m, prompts[r], slots[r]));
  }
  // The base row is what a model without any adapter computes.
  CHECK(mixed.rows[1].logits == all_logits(*plain.model, prompts[1], -1));
  // Adapters differ from each other and from the base.
  CHECK(mixed.rows[0].logits != all_logits(m, prompts[0], -1));
  CHECK(all_logits(m, prompts[0], 1) != all_logits(m, prompts[0], 2));

  // A slot loaded again holds only the new adapter: c over a equals c in its own slot.
  m.load_lora(0, *model::load_lora_adapter("c", c.adapter(), m.config(), max_rank));
  CHECK(all_logits(m, prompts[2], 0) == all_logits(m, prompts[2], 2));
}

TEST_CASE("lora: adapters courier cannot serve exactly are refused, naming the file and field",
          "[lora][sim]") {
  const test::lora_fixture fx("tiny-qwen2", "--seed 5 --rank 8 --alpha 16 --targets q_proj,o_proj");
  test::sim_model qwen2("tiny-qwen2");
  test::sim_model llama("tiny-llama3");
  const auto& cfg = qwen2.model->config();
  auto error_of = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const model::model_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  using Catch::Matchers::Contains;
  // Another model's shapes: the tensor and both shapes are named.
  CHECK_THAT(
      error_of([&] { model::load_lora_adapter("a", fx.adapter(), llama.model->config(), 16); }),
      Contains("adapter_model.safetensors") && Contains("has shape [8, 128], expected [8, 256]"));
  CHECK_THAT(error_of([&] { model::load_lora_adapter("a", fx.adapter(), cfg, 4); }),
             Contains("adapter_config.json") && Contains("over lora.max_rank (4)"));
  CHECK_THAT(error_of([&] { model::load_lora_adapter("a", "/nonexistent", cfg, 16); }),
             Contains("/nonexistent/adapter_config.json"));
  // Fields that change the math, one at a time in a copy of the config.
  const std::string path = fx.adapter() + "/adapter_config.json";
  std::string original;
  {
    std::ifstream in(path);
    original.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = original;
    const auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    s.replace(at, from.size(), to);
    std::ofstream(path) << s;
    const std::string e = error_of([&] { model::load_lora_adapter("a", fx.adapter(), cfg, 16); });
    std::ofstream(path) << original;
    return e;
  };
  CHECK_THAT(with("\"modules_to_save\": null", "\"modules_to_save\": [\"lm_head\"]"),
             Contains("\"modules_to_save\"") && Contains("not supported"));
  CHECK_THAT(with("\"use_dora\": false", "\"use_dora\": true"), Contains("\"use_dora\""));
  CHECK_THAT(with("\"bias\": \"none\"", "\"bias\": \"all\""), Contains("\"bias\""));
  CHECK_THAT(with("\"peft_type\": \"LORA\"", "\"peft_type\": \"IA3\""), Contains("peft_type"));
  CHECK_THAT(with("\"q_proj\",", "\"lm_head\","), Contains("target module \"lm_head\""));
  CHECK_THAT(with("\"r\": 8", "\"r\": 4"), Contains("expected [4, 128]"));
  // And the unchanged config loads.
  CHECK(model::load_lora_adapter("a", fx.adapter(), cfg, 16)->num_modules == 4);
}

TEST_CASE("lora: an adapter's files are read only when they are regular files of a bounded "
          "size: a FIFO, /dev/zero or an oversized file is refused at once, naming it",
          "[lora][sim]") {
  test::sim_model qwen2("tiny-qwen2");
  const auto& cfg = qwen2.model->config();
  auto error_of = [&](const std::string& dir) {
    try {
      model::load_lora_adapter("a", dir, cfg, 16);
    } catch (const model::model_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  using Catch::Matchers::Contains;
  namespace fs = std::filesystem;
  auto fresh = [](const std::string& dir) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
  };
  const std::string root = "/tmp/courier-lora-hostile-" + std::to_string(::getpid());
  {  // adapter_config.json a FIFO: before, the load (and a server's start) waited forever
    const std::string dir = fresh(root + "/fifo-config");
    REQUIRE(::mkfifo((dir + "/adapter_config.json").c_str(), 0600) == 0);
    CHECK_THAT(error_of(dir), Contains(dir + "/adapter_config.json") &&
                                  Contains("not a regular file"));
  }
  const test::lora_fixture fx("tiny-qwen2", "--seed 5 --rank 8 --alpha 16 --targets q_proj,o_proj");
  const std::string config = fx.adapter() + "/adapter_config.json";
  {  // the weights a FIFO, then /dev/zero (before: 4.5 GB read)
    const std::string dir = fresh(root + "/fifo-weights");
    fs::copy_file(config, dir + "/adapter_config.json");
    REQUIRE(::mkfifo((dir + "/adapter_model.safetensors").c_str(), 0600) == 0);
    CHECK_THAT(error_of(dir), Contains(dir + "/adapter_model.safetensors") &&
                                  Contains("not a regular file"));
    fs::remove(dir + "/adapter_model.safetensors");
    fs::create_symlink("/dev/zero", dir + "/adapter_model.safetensors");
    CHECK_THAT(error_of(dir), Contains("not a regular file"));
    fs::remove(dir + "/adapter_model.safetensors");
    fs::create_symlink("/dev/zero", dir + "/adapter_config.json.tmp");
    fs::remove(dir + "/adapter_config.json");
    fs::rename(dir + "/adapter_config.json.tmp", dir + "/adapter_config.json");
    CHECK_THAT(error_of(dir), Contains(dir + "/adapter_config.json") &&
                                  Contains("not a regular file"));
  }
  {  // a weights file larger than any rank-8 adapter of this model can be (sparse: no disk used)
    const std::string dir = fresh(root + "/huge");
    fs::copy_file(config, dir + "/adapter_config.json");
    const std::string weights = dir + "/adapter_model.safetensors";
    fs::copy_file(fx.adapter() + "/adapter_model.safetensors", weights);
    const std::uint64_t bound = model::max_adapter_file_bytes(cfg, 8);
    CHECK(fs::file_size(weights) <= bound);
    fs::resize_file(weights, bound + 1);
    CHECK_THAT(error_of(dir), Contains(weights) && Contains("more than the"));
  }
  {  // a config file over the JSON bound, and one nested past it
    const std::string dir = fresh(root + "/big-config");
    std::ofstream(dir + "/adapter_config.json") << "{}";
    fs::resize_file(dir + "/adapter_config.json", model::detail::max_json_file_bytes + 1);
    CHECK_THAT(error_of(dir), Contains("more than the"));
    std::ofstream(dir + "/adapter_config.json")
        << std::string(100000, '[') << std::string(100000, ']');
    CHECK_THAT(error_of(dir), Contains("levels deep"));
  }
  fs::remove_all(root);
  // The same folder's real files still load.
  CHECK(model::load_lora_adapter("a", fx.adapter(), cfg, 16)->num_modules == 4);
}

TEST_CASE("lora: bf16 and f32 weights at an odd offset of the file load as at an even one",
          "[lora][sim]") {
  // safetensors does not align tensor data: a header of odd length puts every tensor at an odd
  // byte, where reading through a uint16_t pointer was undefined (UBSan aborted; found while
  // fuzzing, tests/fuzz/README.md). The header padded by one space must give the same adapter.
  test::sim_model qwen2("tiny-qwen2");
  const auto& cfg = qwen2.model->config();
  namespace fs = std::filesystem;
  for (const char* dtype : {"bf16", "f32"}) {  // make-lora.mjs writes these two
    const test::lora_fixture fx(
        "tiny-qwen2", std::string("--seed 6 --rank 4 --alpha 8 --targets q_proj,down_proj "
                                  "--adapter-dtype ") + dtype);
    std::ifstream in(fx.adapter() + "/adapter_model.safetensors", std::ios::binary);
    std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(file.size() > 8);
    std::uint64_t n = 0;
    std::memcpy(&n, file.data(), 8);
    const std::uint64_t padded = n % 2 == 0 ? n + 1 : n + 2;  // odd, and one more than before
    const std::string header = file.substr(8, n) + std::string(padded - n, ' ');
    const std::string dir = "/tmp/courier-lora-odd-" + std::to_string(::getpid()) + "-" + dtype;
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy_file(fx.adapter() + "/adapter_config.json", dir + "/adapter_config.json");
    std::string out(8, '\0');
    std::memcpy(out.data(), &padded, 8);
    std::ofstream(dir + "/adapter_model.safetensors", std::ios::binary)
        << out << header << file.substr(8 + n);
    const auto even = model::load_lora_adapter("a", fx.adapter(), cfg, 16);
    const auto odd = model::load_lora_adapter("a", dir, cfg, 16);
    REQUIRE(odd->layers.size() == even->layers.size());
    for (std::size_t l = 0; l < even->layers.size(); ++l) {
      for (std::size_t k = 0; k < model::num_lora_linears; ++k) {
        const auto& a = even->layers[l][k].parts;
        const auto& b = odd->layers[l][k].parts;
        REQUIRE(a.size() == b.size());
        for (std::size_t p = 0; p < a.size(); ++p) {
          CHECK(a[p].a == b[p].a);
          CHECK(a[p].b == b[p].b);
        }
      }
    }
    CHECK(odd->num_modules == even->num_modules);
    fs::remove_all(dir);
  }
}

}  // namespace courier_test_gpu_model_lora
