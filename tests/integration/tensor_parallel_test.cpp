// The server with its model split over 2 and 4 devices (parallel.tensor_size; sim devices, or
// the CUDA emulator's: test::tp_config): the engine steps every plan on every rank, and each
// request gives what it gives alone on one device, through batching, overlap, decode graphs,
// prefix caching and preemption; every KV block comes
// back; a hybrid's Mamba-2 mixers too; the KV host and disk tiers. What cannot be split is
// refused at start, naming why. LoRA adapters split with the model.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <random>

#include "actors/config/config.hpp"
#include "tests/support/lora_fixture.hpp"
#include "tests/support/lora_reference.hpp"
#include "tests/support/reference_match.hpp"
#include "tests/support/runtime_harness.hpp"
#include "tests/support/submit_reference.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_tensor_parallel {

using namespace courier;
namespace fs = std::filesystem;

namespace {

const char* const model_name = "tiny-qwen2";  // 4 heads, 2 KV heads: splits over 2 and 4

// Greedy and seeded sampling requests, prompts of 1..max_prompt tokens, min_out.. tokens out.
std::vector<msg::submit> requests(int n, unsigned seed, int max_prompt, int min_out) {
  std::mt19937 rng(seed);
  std::vector<msg::submit> out;
  for (int i = 0; i < n; ++i) {
    msg::submit s;
    s.id = static_cast<msg::request_id>(i + 1);
    const int len = 1 + static_cast<int>(rng() % static_cast<unsigned>(max_prompt));
    // A shared head on every third prompt, so that the prefix cache has something to find.
    for (int t = 0; t < len; ++t) s.prompt.push_back(i % 3 == 0 && t < 40 ? 7 + t : rng() % 2048);
    s.max_tokens = min_out + static_cast<int>(rng() % 16);
    s.ignore_eos = true;
    s.sampling.has_seed = true;
    s.sampling.seed = rng();
    if (i % 2 == 1) {
      s.sampling.temperature = 0.8f;
      s.sampling.top_k = 50;
    }
    out.push_back(s);
  }
  return out;
}

// The stats after the run, and the prompt tokens the prefix cache gave (cached_out).
msg::scheduler_stats run_and_compare(config::server_config cfg,
                                     const std::vector<msg::submit>& reqs,
                                     int* cached_out = nullptr, const char* name = model_name) {
  test::sim_model one(name);
  test::harness h(cfg);
  for (const auto& s : reqs) h.submit(s);
  auto& got = h.wait_all();
  int cached = 0;
  for (const auto& s : reqs) {
    INFO("request " << s.id << " with a " << s.prompt.size() << "-token prompt");
    const auto& o = got.at(s.id);
    CHECK(o.last.finish == msg::finish_reason::length);
    CHECK(test::mismatch(o.tokens, test::reference_for(one, s)) == "");
    cached += o.last.use.cached_tokens;
  }
  if (cached_out) *cached_out = cached;
  const auto st = h.stats();
  CHECK(st.num_running == 0);
  CHECK(st.num_free_blocks + st.num_cached_blocks == st.num_total_blocks);
  CHECK(h.drain().num_free_blocks == st.num_total_blocks);
  return st;
}

config::server_config tp_config(int ranks) {
  return test::tp_config(test::sim_config(model_name), ranks);
}

}  // namespace

TEST_CASE("tensor parallel server: 2 and 4 ranks give what each request gives alone on one "
          "device",
          "[integration][tensor_parallel]") {
  const auto reqs = requests(32, 7, 120, 4);
  for (const int ranks : {2, 4}) {
    INFO(ranks << " ranks");
    int cached = 0;
    const msg::scheduler_stats st = run_and_compare(tp_config(ranks), reqs, &cached);
    CHECK(st.follow_rows > 0);  // overlap: steps launched behind the one in flight
    CHECK(cached > 0);          // the shared heads were found in the cache
  }
}

TEST_CASE("tensor parallel server: a hybrid (NemotronH) over 2 and 4 ranks gives what each "
          "request gives alone on one device, its Mamba-2 states and snapshots split too",
          "[integration][tensor_parallel]") {
  const int ranks = GENERATE(2, 4);  // 4: two ranks share each of its 2 B/C groups
  INFO(ranks << " ranks");
  auto cfg = test::tp_config(test::hybrid_config("tiny-hybrid"), ranks);
  cfg.scheduler.block_size = 16;
  cfg.cache.ssm_checkpoint_tokens = 16;  // snapshots within the 40-token shared heads
  cfg.cache.ssm_snapshots = 16;
  auto reqs = requests(24, 13, 120, 4);
  reqs[0].prompt.resize(40);  // the shared head alone, first: its snapshots are there after
  test::sim_model one("tiny-hybrid");
  test::harness h(cfg);
  h.submit(reqs[0]);
  h.wait_all();
  for (std::size_t i = 1; i < reqs.size(); ++i) h.submit(reqs[i]);
  auto& got = h.wait_all();
  int cached = 0;
  for (const auto& s : reqs) {
    INFO("request " << s.id << " with a " << s.prompt.size() << "-token prompt");
    CHECK(got.at(s.id).last.finish == msg::finish_reason::length);
    CHECK(test::mismatch(got.at(s.id).tokens, test::reference_for(one, s)) == "");
    cached += got.at(s.id).last.use.cached_tokens;
  }
  CHECK(cached > 0);  // shared heads restored from the ranks' state snapshots
  const auto st = h.stats();
  CHECK(st.snapshot_hits_intermediate + st.snapshot_hits_exact > 0);
  CHECK(h.drain().num_free_blocks == st.num_total_blocks);
}

TEST_CASE("tensor parallel server: requests for LoRA adapters over 2 ranks give each "
          "adapter's tokens on one device, two adapters in one slot's turn",
          "[integration][tensor_parallel][lora]") {
  const test::lora_fixture a(model_name, "--seed 61 --rank 8 --alpha 16 --delta 0.6 --targets "
                                         "q_proj,v_proj,o_proj,down_proj");
  const test::lora_fixture b(model_name, "--seed 62 --rank 4 --alpha 8 --delta 0.6 --targets "
                                         "k_proj,gate_proj,up_proj");
  auto cfg = tp_config(2);
  cfg.lora.adapters = {{"a", a.adapter()}, {"b", b.adapter()}};
  cfg.lora.max_loras = 1;  // b waits for a's slot, then is loaded into it on both ranks
  test::harness h(cfg);
  const std::vector<std::string> names = {"a", "b", ""};
  const std::vector<std::string> dirs = {a.adapter(), b.adapter(), ""};
  std::vector<msg::submit> reqs;
  for (msg::request_id id = 1; id <= 6; ++id) {
    msg::submit s;
    s.id = id;
    for (int t = 0; t < 12; ++t) s.prompt.push_back(static_cast<msg::token_id>((t * 37 + id) % 2000));
    s.adapter = names[id % 3];
    s.max_tokens = 10;
    s.ignore_eos = true;
    s.sampling.temperature = 0.0f;
    reqs.push_back(s);
    h.submit(s);
  }
  auto& got = h.wait_all();
  for (const auto& s : reqs) {
    INFO("request " << s.id << ", adapter '" << s.adapter << "'");
    CHECK(test::mismatch(got.at(s.id).tokens,
                         test::lora_reference(model_name, dirs[s.id % 3], s.prompt, 10)) == "");
  }
  CHECK(h.stats().lora_loads >= 2);
}

TEST_CASE("tensor parallel server: preemption under a small KV budget, outputs unchanged",
          "[integration][tensor_parallel]") {
  const int host_mb = GENERATE(0, 1);  // with a host tier, victims swap out and back
  INFO("cache.host_tier_mb " << host_mb);
  auto cfg = tp_config(2);
  cfg.scheduler.num_kv_blocks = 12;  // 192 tokens per rank's cache: what the longest needs
  cfg.cache.host_tier_mb = host_mb;
  // Not "auto", which weighs the device's rates (a GPU recomputes tiny-llama3's blocks sooner
  // than it copies them).
  if (host_mb > 0) cfg.cache.preemption = "swap";
  const msg::scheduler_stats st = run_and_compare(cfg, requests(24, 11, 40, 60));
  CHECK(st.num_preemptions >= 3);
  if (host_mb > 0) {
    CHECK(st.swap_outs > 0);
    CHECK(st.swapped_in_blocks > 0);
  }
}

TEST_CASE("tensor parallel server: a hybrid over 2 ranks swaps its KV and Mamba-2 states to "
          "each rank's host memory under preemption, outputs unchanged",
          "[integration][tensor_parallel]") {
  auto cfg = test::tp_config(test::hybrid_config("tiny-hybrid"), 2);
  cfg.scheduler.num_kv_blocks = 12;
  cfg.cache.host_tier_mb = 1;
  cfg.cache.ssm_host_tier_mb = 1;
  cfg.cache.preemption = "swap";
  const msg::scheduler_stats st =
      run_and_compare(cfg, requests(24, 11, 40, 60), nullptr, "tiny-hybrid");
  CHECK(st.swap_outs > 0);
  CHECK(st.swapped_in_blocks > 0);
}

TEST_CASE("tensor parallel server: the KV host and disk tiers hold each rank's share of every "
          "block; swapped and evicted KV comes back through them, outputs unchanged",
          "[integration][tensor_parallel]") {
  const int ranks = GENERATE(2, 4);
  INFO(ranks << " ranks");
  const fs::path folder = fs::temp_directory_path() / ("courier-tp-tiers-" +
                                                        std::to_string(::getpid()) + "-" +
                                                        std::to_string(ranks));
  fs::create_directories(folder);
  auto cfg = tp_config(ranks);
  cfg.scheduler.num_kv_blocks = 24;  // 18 documents of ~13 blocks: the device keeps one or two
  cfg.cache.host_tier_mb = 1;  // 64 blocks of f32 KV in all (each rank its share; 128 of bf16
                               // on cuda): not the rest
  cfg.cache.disk_tier_path = folder.string();
  cfg.cache.disk_tier_gb = 0.02;
  std::mt19937 rng(31);
  std::vector<std::vector<msg::token_id>> docs(18);
  for (auto& d : docs) {
    for (int t = 0; t < 150 + static_cast<int>(rng() % 100); ++t) d.push_back(rng() % 2048);
  }
  std::vector<msg::submit> reqs;
  for (int i = 0; i < 45; ++i) {
    msg::submit q;
    q.id = static_cast<msg::request_id>(i + 1);
    q.prompt = docs[rng() % docs.size()];
    for (int t = 0; t < 4; ++t) q.prompt.push_back(rng() % 2048);
    q.max_tokens = 6;
    q.ignore_eos = true;
    q.sampling.temperature = 0.0f;
    reqs.push_back(q);
  }
  test::sim_model one(model_name);
  msg::scheduler_stats st;
  {
    test::harness h(cfg);
    for (std::size_t at = 0; at < reqs.size(); at += 3) {  // waves of 3: ~39 blocks at once
      for (std::size_t i = at; i < at + 3; ++i) h.submit(reqs[i]);
      auto& got = h.wait_all();
      for (std::size_t i = at; i < at + 3; ++i) {
        INFO("request " << reqs[i].id);
        CHECK(test::mismatch(got.at(reqs[i].id).tokens, test::reference_for(one, reqs[i])) == "");
      }
      (void)h.settled_stats();  // written to disk before the next wave evicts
    }
    st = h.settled_stats();
    CHECK(h.drain().num_free_blocks == st.num_total_blocks);
  }
  INFO("host hits " << st.host_cache_hit_tokens << ", disk written " << st.disk_written_blocks
                     << ", read " << st.disk_read_blocks);
  CHECK(st.host_cache_hit_tokens > 0);   // documents back from host memory
  CHECK(st.disk_read_blocks > 0);        // and from disk
  CHECK(st.disk_cache_hit_tokens > 0);
  CHECK(st.disk_read_failures + st.disk_write_failures == 0);
  fs::remove_all(folder);
}

TEST_CASE("tensor parallel server: what is not split yet is refused at start, naming why",
          "[integration][tensor_parallel]") {
  CHECK_THROWS_WITH(config::parse_config("parallel: {tensor_size: 0}", "test.yaml", {}),
                    Catch::Contains("parallel.tensor_size"));
  auto llama = tp_config(4);
  llama.model.path = test::model_dir("tiny-llama3");  // 2 heads
  CHECK_THROWS_WITH(actors::runtime(llama), Catch::Contains("2 attention heads"));
}

}  // namespace courier_test_integration_tensor_parallel
