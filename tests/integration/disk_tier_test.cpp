// The KV disk tier end to end on the sim backend: documents evicted from the device and from a
// host tier too small for them are written to disk and read back for the next question about
// them, and every output still equals the request alone (the KV read back is the KV computed,
// bit for bit). With persistence a restart reuses what the last run wrote; a corrupted or
// truncated file is dropped block by block, with outputs unchanged.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "tests/support/lora_fixture.hpp"
#include "tests/support/lora_reference.hpp"
#include "tests/support/reference_match.hpp"
#include "tests/support/runtime_harness.hpp"
#include "tests/support/submit_reference.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_integration_disk_tier {

using namespace courier;
namespace fs = std::filesystem;

namespace {

const char* const model_name = "tiny-llama3";

struct workload {
  std::vector<msg::submit> requests;
  std::map<msg::request_id, test::reference_output> want;
};

// 10 documents of 150-250 tokens, 24 questions about them (greedy and seeded sampling).
const workload& documents() {
  static const workload w = [] {
    workload x;
    std::mt19937 rng(23);
    std::vector<std::vector<msg::token_id>> docs(10);
    for (auto& d : docs) {
      for (int t = 0; t < 150 + static_cast<int>(rng() % 100); ++t) d.push_back(rng() % 2048);
    }
    for (int i = 0; i < 24; ++i) {
      msg::submit s;
      s.id = static_cast<msg::request_id>(i + 1);
      s.prompt = docs[rng() % docs.size()];
      for (int t = 0; t < 3 + static_cast<int>(rng() % 8); ++t) s.prompt.push_back(rng() % 2048);
      s.max_tokens = 4 + static_cast<int>(rng() % 8);
      s.ignore_eos = true;
      s.sampling.has_seed = true;
      s.sampling.seed = rng();
      s.sampling.temperature = i % 2 ? 0.8f : 0.0f;
      x.requests.push_back(s);
    }
    test::sim_model sm(model_name);
    for (const auto& s : x.requests) x.want[s.id] = test::reference_for(sm, s);
    return x;
  }();
  return w;
}

std::string disk_folder(const std::string& name) {
  const fs::path p =
      fs::temp_directory_path() / ("courier-disk-tier-" + std::to_string(::getpid())) / name;
  fs::create_directories(p);
  return p.string();
}

// Serves the workload's requests [first, last) in waves of 3 on 24 device blocks and a 1 MB host
// tier (32 of tiny-llama3's blocks of f32 KV, 64 of bf16: not the documents' ~120), with a
// disk tier in `folder` when not empty; checks every output against the request alone.
msg::scheduler_stats serve(const std::string& folder, bool persist, std::size_t first = 0,
                           std::size_t last = 24) {
  const workload& w = documents();
  auto cfg = test::sim_config(model_name);
  cfg.scheduler.num_kv_blocks = 24;
  cfg.cache.host_tier_mb = 1;
  if (!folder.empty()) {
    cfg.cache.disk_tier_path = folder;
    cfg.cache.disk_tier_gb = 0.02;
    cfg.cache.disk_tier_persist = persist;
  }
  test::harness h(cfg);
  std::int64_t usage_cached = 0;  // what the responses' usage.cached_tokens add up to
  for (std::size_t at = first; at < last; at += 3) {
    for (std::size_t i = at; i < std::min(at + 3, last); ++i) h.submit(w.requests[i]);
    auto& got = h.wait_all();
    for (std::size_t i = at; i < std::min(at + 3, last); ++i) {
      const msg::request_id id = w.requests[i].id;
      INFO("request " << id);
      CHECK(test::mismatch(got.at(id).tokens, w.want.at(id)) == "");
      CHECK(got.at(id).last.finish == msg::finish_reason::length);
      usage_cached += got.at(id).last.use.cached_tokens;
    }
    if (!folder.empty()) h.settled_stats();  // written through before the next wave evicts
  }
  const msg::scheduler_stats st = h.settled_stats();
  // Reused tokens from every tier count in the responses' usage.
  CHECK(usage_cached == static_cast<std::int64_t>(st.cached_tokens));
  CHECK(st.num_loading == 0);
  CHECK(h.drain().num_free_blocks == st.num_total_blocks);
  return st;
}

// One of tiny-llama3's KV blocks of 16 tokens: f32 on the sim, bf16 on cuda.
std::size_t block_bytes() { return test::exact_backend() ? 32768 : 16384; }

// Flips a byte in the middle of every block's payload (4 KB headers, then the block's bytes).
void corrupt_payloads(const std::string& file) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  const auto size = static_cast<std::size_t>(fs::file_size(file));
  for (std::size_t at = 4096 + 1000; at < size; at += 4096 + block_bytes()) {
    f.seekg(static_cast<std::streamoff>(at));
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x11);
    f.seekp(static_cast<std::streamoff>(at));
    f.write(&c, 1);
  }
}

}  // namespace

TEST_CASE("disk tier: prompts reuse documents read back from disk, outputs unchanged",
          "[integration][scheduler]") {
  const msg::scheduler_stats host_only = serve("", false);
  const msg::scheduler_stats with_disk = serve(disk_folder("plain"), false);
  INFO("cached tokens host only " << host_only.cached_tokens << ", with disk "
                                  << with_disk.cached_tokens);
  CHECK(with_disk.disk_written_blocks > 0);
  CHECK(with_disk.disk_read_blocks > 0);
  CHECK(with_disk.disk_cache_hit_tokens > 0);
  CHECK(with_disk.disk_read_failures + with_disk.disk_write_failures == 0);
  CHECK(with_disk.cached_tokens > host_only.cached_tokens);
  CHECK_FALSE(fs::exists(fs::path(disk_folder("plain")) / "courier-kv.blocks"));  // not kept
}

TEST_CASE(
    "disk tier: with persistence a restart reuses what the last run wrote, and a "
    "corrupted file's blocks are found out when read, outputs unchanged",
    "[integration][scheduler]") {
  const std::string folder = disk_folder("persist");
  const std::string file = (fs::path(folder) / "courier-kv.blocks").string();
  fs::remove(file);
  const msg::scheduler_stats first = serve(folder, true, 0, 12);
  REQUIRE(first.disk_written_blocks > 0);
  REQUIRE(fs::exists(file));
  // The next run starts with an empty device and host: its first prompts hit on disk.
  const msg::scheduler_stats again = serve(folder, true, 12, 24);
  CHECK(again.disk_restored_blocks == first.disk_written_blocks);
  CHECK(again.disk_cache_hit_tokens > 0);
  CHECK(again.disk_read_failures == 0);
  // Every payload damaged: each block read is found out (its checksum) and recomputed.
  corrupt_payloads(file);
  const msg::scheduler_stats corrupted = serve(folder, true, 0, 12);
  CHECK(corrupted.disk_restored_blocks > 0);
  CHECK(corrupted.disk_read_failures > 0);
  fs::remove_all(folder);
}

TEST_CASE(
    "disk tier: blocks an adapter wrote in one run are never served to another adapter under "
    "its name in the next",
    "[integration][scheduler][lora]") {
  const test::lora_fixture a(model_name, "--seed 40 --rank 8 --alpha 16 --targets q_proj,v_proj");
  const test::lora_fixture b(model_name, "--seed 41 --rank 8 --alpha 16 --targets q_proj,v_proj");
  const std::string folder = disk_folder("adapter-persist");
  fs::remove(fs::path(folder) / "courier-kv.blocks");
  std::mt19937 rng(7);
  std::vector<std::vector<msg::token_id>> docs(6);
  for (auto& d : docs) {
    for (int t = 0; t < 200; ++t) d.push_back(rng() % 2048);
  }
  struct run {
    msg::scheduler_stats stats;
    std::vector<msg::token_id> tokens;
    std::int32_t cached = 0;
  };
  // A run with "x" = `dir`: the adapter's question about docs[0], then five base-model ones that
  // push it out of the device and the 1 MB host tier.
  auto serve_as_x = [&](const std::string& dir, bool push_out) {
    auto cfg = test::sim_config(model_name);
    cfg.scheduler.num_kv_blocks = 24;
    cfg.cache.host_tier_mb = 1;
    cfg.cache.disk_tier_path = folder;
    cfg.cache.disk_tier_gb = 0.02;
    cfg.cache.disk_tier_persist = true;
    cfg.lora.adapters = {{"x", dir}};
    test::harness h(cfg);
    msg::submit q;
    q.id = 1;
    q.prompt = docs[0];
    q.adapter = "x";
    q.max_tokens = 6;
    q.ignore_eos = true;
    q.sampling.temperature = 0.0f;
    h.submit(q);
    run r;
    const auto& first = h.wait_all().at(1);
    r.tokens = first.tokens;
    r.cached = first.last.use.cached_tokens;
    if (push_out) {
      for (std::size_t i = 1; i < docs.size(); ++i) {
        msg::submit other = q;
        other.id = 1 + i;
        other.prompt = docs[i];
        other.adapter.clear();
        h.submit(other);
        h.wait_all();
        h.settled_stats();
      }
    }
    r.stats = h.settled_stats();
    return r;
  };
  const auto ref_a = test::lora_reference(model_name, a.adapter(), docs[0], 6);
  const auto ref_b = test::lora_reference(model_name, b.adapter(), docs[0], 6);
  REQUIRE(ref_a.tokens != ref_b.tokens);

  const run first = serve_as_x(a.adapter(), true);
  CHECK(test::mismatch(first.tokens, ref_a) == "");
  REQUIRE(first.stats.disk_written_blocks > 0);
  // The next run's "x" is another adapter: a's blocks are on disk, and none is its.
  const run other = serve_as_x(b.adapter(), false);
  CHECK(other.stats.disk_restored_blocks > 0);
  CHECK(other.cached == 0);
  CHECK(other.stats.disk_cache_hit_tokens == 0);
  CHECK(test::mismatch(other.tokens, ref_b) == "");
  // With a again, they are found: the check above is not merely a cold cache.
  const run again = serve_as_x(a.adapter(), false);
  CHECK(again.stats.disk_cache_hit_tokens > 0);
  CHECK(again.cached > 0);
  CHECK(test::mismatch(again.tokens, ref_a) == "");
  fs::remove_all(folder);
}

TEST_CASE("disk tier: a truncated persisted file keeps the blocks it still holds whole",
          "[integration][scheduler]") {
  const std::string folder = disk_folder("truncated");
  const std::string file = (fs::path(folder) / "courier-kv.blocks").string();
  fs::remove(file);
  const msg::scheduler_stats first = serve(folder, true, 0, 12);
  const auto written = static_cast<std::uintmax_t>(first.disk_written_blocks);
  REQUIRE(written > 4);
  const std::uintmax_t slot = 4096 + block_bytes();  // a header, then one block
  fs::resize_file(file, written / 2 * slot + slot / 2);  // the last slot kept is cut in two
  const msg::scheduler_stats after = serve(folder, true, 0, 12);
  CHECK(after.disk_restored_blocks == written / 2);
  CHECK(after.disk_read_failures == 0);
  CHECK(after.disk_cache_hit_tokens > 0);
  fs::remove_all(folder);
}

TEST_CASE(
    "disk tier: a folder that cannot be used, or a file another server holds, is an "
    "error naming the key at start",
    "[integration][scheduler]") {
  auto cfg = test::sim_config(model_name);
  cfg.scheduler.num_kv_blocks = 24;
  cfg.cache.host_tier_mb = 1;
  cfg.cache.disk_tier_gb = 0.01;
  const std::string plain_file = disk_folder("not-a-folder") + "/file";
  std::ofstream(plain_file) << "x";
  cfg.cache.disk_tier_path = plain_file;
  CHECK_THROWS_WITH(test::harness(cfg), Catch::StartsWith("cache.disk_tier_path: ") &&
                                            Catch::Contains("is not a folder"));
  cfg.cache.disk_tier_path = disk_folder("shared");
  test::harness first(cfg);
  CHECK_THROWS_WITH(test::harness(cfg), Catch::StartsWith("cache.disk_tier_path: ") &&
                                            Catch::Contains("is in use by another process"));
}

}  // namespace courier_test_integration_disk_tier
