#include "actors/config/config.hpp"
#include "actors/config/config_schema.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace courier::config {
namespace {

using overrides = std::vector<std::string>;

// The message of the config_error that parsing throws, or "" when it succeeds.
std::string error_of(const std::string& yaml, const overrides& sets = {}) {
  try {
    (void)parse_config(yaml, "test.yaml", sets);
  } catch (const config_error& e) {
    return e.what();
  }
  return "";
}

server_config parse(const std::string& yaml, const overrides& sets = {}) {
  return parse_config(yaml, "test.yaml", sets);
}

std::string repo_root() {
  return COURIER_TEST_DATA "/../..";
}

// A file under the system temp folder, removed when the test ends.
class temp_file {
 public:
  explicit temp_file(const std::string& text)
      : path_(std::filesystem::temp_directory_path() /
              ("courier_config_test_" + std::to_string(::getpid()) + "_" +
               std::to_string(next_id_++) + ".yaml")) {
    std::ofstream(path_) << text;
  }
  ~temp_file() { std::filesystem::remove(path_); }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  std::string path() const { return path_.string(); }

 private:
  static inline int next_id_ = 0;
  std::filesystem::path path_;
};

}  // namespace

TEST_CASE("config: with no file and no overrides every key has its default", "[config]") {
  const server_config c = load_config("", {});
  CHECK(c.model.path.empty());
  CHECK(c.model.served_name.empty());
  CHECK(c.model.max_model_len == 0);
  CHECK(c.device.index == 0);
  CHECK(c.device.backend == "auto");
  CHECK(c.device.memory_fraction == 0.9);
  CHECK(c.device.sim.threads == 0);
  CHECK(c.device.sim.memory_mb == 4096);
  CHECK(c.engine.gemm_autotune);
  CHECK(c.server.host == "127.0.0.1");
  CHECK(c.server.port == 8000);
  CHECK(c.server.api_keys.empty());
  CHECK(c.server.max_waiting == 1024);
  CHECK(c.server.max_body_bytes == 16 * 1024 * 1024);
  CHECK(c.server.max_json_depth == 64);
  CHECK(c.server.max_sequences_per_request == 64);
  CHECK(c.server.max_stream_buffer_bytes == 8 * 1024 * 1024);
  CHECK(c.server.responses_store_mb == 64);
  CHECK(c.server.responses_store_s == 3600);
  CHECK(c.server.cors_allowed_origins.empty());
  CHECK(c.server.max_n == 16);
  CHECK(c.server.web_ui == "auto");
  CHECK(c.server.actor_threads == 2);
  CHECK(c.scheduler.max_num_seqs == 256);
  CHECK(c.scheduler.max_batched_tokens == 2048);
  CHECK(c.scheduler.block_size == 16);
  CHECK_FALSE(c.scheduler.num_kv_blocks.has_value());
  CHECK(c.scheduler.prefix_caching);
  CHECK(c.scheduler.cache_isolation == "none");
  CHECK_FALSE(c.speculative.prompt_lookup.enabled);
  CHECK(c.speculative.prompt_lookup.num_draft == 4);
  CHECK(c.speculative.prompt_lookup.min_ngram == 2);
  CHECK(c.speculative.prompt_lookup.max_ngram == 4);
  CHECK(c.speculative.shared_cache_mb == 0);
  CHECK(c.speculative.shared_cache_scopes == 4);
  CHECK(c.lora.adapters.empty());
  CHECK(c.lora.max_loras == 4);
  CHECK(c.lora.max_rank == 16);
  CHECK(c.lora.max_cpu_loras == 0);
  CHECK_FALSE(c.lora.runtime_loading);
  CHECK(c.telemetry.metrics);
  CHECK(c.telemetry.trace.path.empty());
  CHECK(c.telemetry.trace.sample == 1.0);
  CHECK(c.telemetry.trace.flush_ms == 100);
  CHECK(c.telemetry.trace.buffer_spans == 1048576);
}

TEST_CASE("config: an empty file, a file of comments and empty sections give the defaults",
          "[config]") {
  for (const std::string yaml : {"", "# nothing here\n", "model:\nscheduler: ~\n"}) {
    const server_config c = parse(yaml);
    CHECK(c.scheduler.block_size == 16);
    CHECK(c.server.port == 8000);
  }
}

TEST_CASE("config: configs/default.yaml loads and runs the tiny model on the sim backend",
          "[config]") {
  const server_config c = load_config(repo_root() + "/configs/default.yaml", {});
  CHECK(c.model.path == "tests/data/models/tiny-qwen3");
  CHECK(std::filesystem::is_directory(repo_root() + "/" + c.model.path));
  CHECK(c.model.served_name == "tiny-qwen3");
  CHECK(c.device.backend == "sim");
  CHECK(c.device.sim.threads == 0);
  CHECK(c.server.host == "127.0.0.1");
  CHECK(c.server.port == 8000);
  CHECK(c.server.api_keys.empty());
  CHECK(c.scheduler.max_num_seqs == 64);
  CHECK(c.scheduler.max_batched_tokens == 512);
  CHECK(c.scheduler.block_size == 16);
  CHECK_FALSE(c.scheduler.num_kv_blocks.has_value());
  CHECK(c.scheduler.prefix_caching);
  CHECK(c.telemetry.trace.path.empty());
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The first line where two texts differ, for a message.
std::string first_difference(const std::string& want, const std::string& got) {
  std::istringstream w(want), g(got);
  std::string a, b;
  for (int line = 1;; ++line) {
    const bool more_w = static_cast<bool>(std::getline(w, a));
    const bool more_g = static_cast<bool>(std::getline(g, b));
    if (!more_w && !more_g) return "";
    if (!more_w || !more_g || a != b) {
      return "line " + std::to_string(line) + ": the schema gives '" + (more_w ? a : "(end)") +
             "', the file has '" + (more_g ? b : "(end)") + "'";
    }
  }
}

TEST_CASE("config: docs/config-keys.md and configs/default.yaml are what the schema generates "
          "(scripts/gen-config-docs.sh)",
          "[config]") {
  for (const auto& [file, want] :
       {std::pair<std::string, std::string>{"docs/config-keys.md", config_keys_markdown()},
        {"configs/default.yaml", default_config_yaml()}}) {
    INFO(file << ": run scripts/gen-config-docs.sh; " << first_difference(want, read_file(repo_root() + "/" + file)));
    CHECK(read_file(repo_root() + "/" + file) == want);
  }
  // Every key is in both, once.
  const std::string table = config_keys_markdown();
  for (const std::string& key : config_keys()) {
    INFO(key);
    CHECK(table.find("| `" + key + "` |") != std::string::npos);
  }
}

TEST_CASE("config: the generated default.yaml reads back as the defaults plus the bundled "
          "model's overrides, key by key",
          "[config]") {
  const server_config from_file = parse_config(default_config_yaml(), "default.yaml", {});
  const server_config want = load_config("", bundled_model_overrides());
  for (const key_spec& key : schema()) {
    INFO(key.path);
    CHECK(key.show(from_file) == key.show(want));
  }
  // And an override changes what the defaults say: the file is not the defaults alone.
  const server_config defaults = load_config("", {});
  CHECK(from_file.scheduler.max_num_seqs != defaults.scheduler.max_num_seqs);
  CHECK(from_file.model.path == "tests/data/models/tiny-qwen3");
}

// One key set by --set to a value unlike its default, and whether the loaded config holds it;
// `with`: the overrides it needs beside it to be valid alone.
struct key_case {
  std::string key;
  std::string value;
  std::function<bool(const server_config&)> holds;
  overrides with = {};
};

std::vector<key_case> every_key_case() {
  using c_ = const server_config&;
  return {
      {"model.path", "/models/x", [](c_ c) { return c.model.path == "/models/x"; }},
      {"model.served_name", "x-chat", [](c_ c) { return c.model.served_name == "x-chat"; }},
      {"model.max_model_len", "4096", [](c_ c) { return c.model.max_model_len == 4096; }},
      {"model.tool_parser", "mistral", [](c_ c) { return c.model.tool_parser == "mistral"; }},
      {"model.reasoning_parser", "qwen3",
       [](c_ c) { return c.model.reasoning_parser == "qwen3"; }},
      {"device.backend", "cuda", [](c_ c) { return c.device.backend == "cuda"; }},
      {"device.index", "3", [](c_ c) { return c.device.index == 3; }},
      {"device.memory_fraction", "0.5", [](c_ c) { return c.device.memory_fraction == 0.5; }},
      {"device.sim.threads", "3", [](c_ c) { return c.device.sim.threads == 3; }},
      {"device.sim.memory_mb", "512", [](c_ c) { return c.device.sim.memory_mb == 512; }},
      {"device.sim.copy_latency_ms", "7",
       [](c_ c) { return c.device.sim.copy_latency_ms == 7; }},
      {"engine.gemm_autotune", "false", [](c_ c) { return !c.engine.gemm_autotune; }},
      {"engine.graph_max_batch", "32", [](c_ c) { return c.engine.graph_max_batch == 32; }},
      {"engine.pipeline", "false", [](c_ c) { return !c.engine.pipeline; }},
      {"parallel.tensor_size", "2", [](c_ c) { return c.parallel.tensor_size == 2; }},
      {"kv_events.endpoint", "tcp://*:5557",
       [](c_ c) { return c.kv_events.endpoint == "tcp://*:5557"; }},
      {"kv_events.topic", "kv", [](c_ c) { return c.kv_events.topic == "kv"; }},
      {"kv_events.replay_endpoint", "tcp://*:5558",
       [](c_ c) { return c.kv_events.replay_endpoint == "tcp://*:5558"; }},
      {"kv_events.buffer_steps", "99", [](c_ c) { return c.kv_events.buffer_steps == 99; }},
      {"cluster.listen", "127.0.0.1:7000",
       [](c_ c) { return c.cluster.listen == "127.0.0.1:7000"; }},
      {"cluster.replicas", "[\"10.0.0.1:7000\"]",
       [](c_ c) { return c.cluster.replicas == std::vector<std::string>{"10.0.0.1:7000"}; }},
      {"cluster.routing", "round_robin", [](c_ c) { return c.cluster.routing == "round_robin"; }},
      {"cluster.heartbeat_ms", "250", [](c_ c) { return c.cluster.heartbeat_ms == 250; }},
      {"cluster.balance_abs", "8", [](c_ c) { return c.cluster.balance_abs == 8; }},
      {"cluster.balance_rel", "2.5", [](c_ c) { return c.cluster.balance_rel == 2.5; }},
      {"cluster.cache_threshold", "0.75",
       [](c_ c) { return c.cluster.cache_threshold == 0.75; }},
      {"server.host", "0.0.0.0", [](c_ c) { return c.server.host == "0.0.0.0"; }},
      {"server.port", "9001", [](c_ c) { return c.server.port == 9001; }},
      {"server.api_keys", "{\"k1\":\"team-a\"}",
       [](c_ c) {
         return c.server.api_keys == std::map<std::string, std::string>{{"k1", "team-a"}};
       }},
      {"server.max_waiting", "7", [](c_ c) { return c.server.max_waiting == 7; }},
      {"server.max_body_bytes", "1000", [](c_ c) { return c.server.max_body_bytes == 1000; }},
      {"server.max_json_depth", "12", [](c_ c) { return c.server.max_json_depth == 12; }},
      {"server.admission_nice", "0", [](c_ c) { return c.server.admission_nice == 0; }},
      {"server.admission_threads", "5", [](c_ c) { return c.server.admission_threads == 5; }},
      {"server.max_sequences_per_request", "9",
       [](c_ c) { return c.server.max_sequences_per_request == 9; }},
      {"server.max_cached_grammars", "11",
       [](c_ c) { return c.server.max_cached_grammars == 11; }},
      {"server.grammar_cache_mb", "64", [](c_ c) { return c.server.grammar_cache_mb == 64; }},
      {"server.grammar_compile_ms", "250", [](c_ c) { return c.server.grammar_compile_ms == 250; }},
      {"server.grammar_compile_mb", "20", [](c_ c) { return c.server.grammar_compile_mb == 20; }},
      {"server.grammar_compile_work", "1000000",
       [](c_ c) { return c.server.grammar_compile_work == 1000000; }},
      {"server.grammar_max_branches", "64",
       [](c_ c) { return c.server.grammar_max_branches == 64; }},
      {"server.max_stream_buffer_bytes", "65536",
       [](c_ c) { return c.server.max_stream_buffer_bytes == 65536; }},
      {"server.responses_store_mb", "0", [](c_ c) { return c.server.responses_store_mb == 0; }},
      {"server.responses_store_s", "60", [](c_ c) { return c.server.responses_store_s == 60; }},
      {"server.cors_allowed_origins", "[\"https://app.example\", \"http://localhost:3000\"]",
       [](c_ c) {
         return c.server.cors_allowed_origins ==
                std::vector<std::string>{"https://app.example", "http://localhost:3000"};
       }},
      {"server.max_n", "4", [](c_ c) { return c.server.max_n == 4; }},
      {"server.web_ui", "false", [](c_ c) { return c.server.web_ui == "false"; }},
      {"server.actor_threads", "6", [](c_ c) { return c.server.actor_threads == 6; }},
      {"scheduler.max_num_seqs", "8", [](c_ c) { return c.scheduler.max_num_seqs == 8; }},
      {"scheduler.max_batched_tokens", "128",
       [](c_ c) { return c.scheduler.max_batched_tokens == 128; }},
      {"scheduler.block_size", "32", [](c_ c) { return c.scheduler.block_size == 32; }},
      {"scheduler.num_kv_blocks", "100",
       [](c_ c) { return c.scheduler.num_kv_blocks == std::optional<std::int64_t>(100); }},
      {"scheduler.prefix_caching", "false", [](c_ c) { return !c.scheduler.prefix_caching; }},
      {"scheduler.overlap", "false", [](c_ c) { return !c.scheduler.overlap; }},
      {"scheduler.state_slots", "12", [](c_ c) { return c.scheduler.state_slots == 12; }},
      {"scheduler.cache_isolation", "tenant",
       [](c_ c) { return c.scheduler.cache_isolation == "tenant"; }},
      {"cache.host_tier_mb", "64", [](c_ c) { return c.cache.host_tier_mb == 64; }},
      {"cache.host_tier_write_through", "false",
       [](c_ c) { return !c.cache.host_tier_write_through; }},
      {"cache.preemption", "swap", [](c_ c) { return c.cache.preemption == "swap"; }},
      {"cache.ssm_snapshots", "40", [](c_ c) { return c.cache.ssm_snapshots == 40; }},
      {"cache.ssm_checkpoint_tokens", "256",
       [](c_ c) { return c.cache.ssm_checkpoint_tokens == 256; }},
      {"cache.ssm_decode_snapshots", "false",
       [](c_ c) { return !c.cache.ssm_decode_snapshots; }},
      {"cache.ssm_host_tier_mb", "16", [](c_ c) { return c.cache.ssm_host_tier_mb == 16; }},
      {"cache.disk_tier_path", "/var/cache/courier",
       [](c_ c) { return c.cache.disk_tier_path == "/var/cache/courier"; }},
      {"cache.disk_tier_gb", "1.5", [](c_ c) { return c.cache.disk_tier_gb == 1.5; },
       {"cache.disk_tier_path=/tmp", "cache.host_tier_mb=1"}},
      {"cache.disk_tier_persist", "true", [](c_ c) { return c.cache.disk_tier_persist; }},
      {"cache.disk_tier_io_threads", "8",
       [](c_ c) { return c.cache.disk_tier_io_threads == 8; }},
      {"cache.disk_tier_read_timeout_ms", "250",
       [](c_ c) { return c.cache.disk_tier_read_timeout_ms == 250; }},
      {"speculative.prompt_lookup.enabled", "true",
       [](c_ c) { return c.speculative.prompt_lookup.enabled; }},
      {"speculative.prompt_lookup.num_draft", "16",
       [](c_ c) { return c.speculative.prompt_lookup.num_draft == 16; }},
      {"speculative.prompt_lookup.min_ngram", "1",
       [](c_ c) { return c.speculative.prompt_lookup.min_ngram == 1; }},
      {"speculative.prompt_lookup.max_ngram", "3",
       [](c_ c) { return c.speculative.prompt_lookup.max_ngram == 3; }},
      {"speculative.shared_cache_mb", "64",
       [](c_ c) { return c.speculative.shared_cache_mb == 64; }},
      {"speculative.shared_cache_scopes", "2",
       [](c_ c) { return c.speculative.shared_cache_scopes == 2; }},
      {"lora.adapters", "{\"sql\": \"/adapters/sql\"}",
       [](c_ c) {
         return c.lora.adapters == std::map<std::string, std::string>{{"sql", "/adapters/sql"}};
       }},
      {"lora.max_loras", "8", [](c_ c) { return c.lora.max_loras == 8; }},
      {"lora.max_rank", "64", [](c_ c) { return c.lora.max_rank == 64; }},
      {"lora.max_cpu_loras", "6", [](c_ c) { return c.lora.max_cpu_loras == 6; }},
      {"lora.runtime_loading", "true", [](c_ c) { return c.lora.runtime_loading; }},
      {"lora.load_timeout_s", "7", [](c_ c) { return c.lora.load_timeout_s == 7; }},
      {"telemetry.metrics", "false", [](c_ c) { return !c.telemetry.metrics; }},
      {"telemetry.trace.path", "/tmp/trace.json",
       [](c_ c) { return c.telemetry.trace.path == "/tmp/trace.json"; }},
      {"telemetry.trace.sample", "0.25",
       [](c_ c) { return c.telemetry.trace.sample == 0.25; }},
      {"telemetry.trace.flush_ms", "20", [](c_ c) { return c.telemetry.trace.flush_ms == 20; }},
      {"telemetry.trace.buffer_spans", "4096",
       [](c_ c) { return c.telemetry.trace.buffer_spans == 4096; }},
  };
}

TEST_CASE("config: every key can be set by --set with its own type", "[config]") {
  const std::vector<key_case> cases = every_key_case();
  // Every key of the schema has a case here (a new key fails this until it gets one), and
  // each case is a key of the schema.
  std::vector<std::string> listed;
  for (const key_case& k : cases) listed.push_back(k.key);
  std::vector<std::string> keys = config_keys();
  std::sort(listed.begin(), listed.end());
  std::sort(keys.begin(), keys.end());
  CHECK(listed == keys);
  overrides sets;
  for (const key_case& k : cases) sets.push_back(k.key + "=" + k.value);
  const server_config all = parse("", sets);
  const server_config defaults = parse("");
  for (const key_case& k : cases) {
    INFO(k.key << "=" << k.value);
    CHECK(k.holds(all));
    CHECK_FALSE(k.holds(defaults));  // the value differs from the default, so it was read
    // and each key alone, as its own override, reaches its own field
    overrides alone = k.with;
    alone.push_back(k.key + "=" + k.value);
    CHECK(k.holds(parse("", alone)));
  }
}

TEST_CASE("config: --set wins over the file, and later overrides win over earlier ones",
          "[config]") {
  const std::string yaml = "scheduler:\n  block_size: 32\n  max_num_seqs: 8\n";
  CHECK(parse(yaml).scheduler.block_size == 32);
  const server_config c = parse(yaml, {"scheduler.block_size=64"});
  CHECK(c.scheduler.block_size == 64);
  CHECK(c.scheduler.max_num_seqs == 8);  // the rest of the section stays
  CHECK(parse("scheduler: ~\n", {"scheduler.block_size=8"}).scheduler.block_size == 8);
  CHECK(parse("scheduler:\n", {"scheduler.block_size=8", "scheduler.max_num_seqs=2"})
            .scheduler.max_num_seqs == 2);
  CHECK(parse(yaml, {"scheduler.block_size=64", "scheduler.block_size=8"}).scheduler.block_size ==
        8);
}

TEST_CASE("config: a --set of a whole section replaces it", "[config]") {
  const server_config c =
      parse("scheduler: {block_size: 32, max_num_seqs: 8}\n", {"scheduler={block_size: 4}"});
  CHECK(c.scheduler.block_size == 4);
  CHECK(c.scheduler.max_num_seqs == 256);
}

TEST_CASE("config: cache isolation is per tenant once API keys are set, unless none is explicit",
          "[config]") {
  CHECK(parse("", {}).scheduler.cache_isolation == "none");
  CHECK(parse("", {"server.api_keys.k1=team-a"}).scheduler.cache_isolation == "tenant");
  CHECK(parse("scheduler: {cache_isolation: auto}", {"server.api_keys.k1=team-a"})
            .scheduler.cache_isolation == "tenant");
  CHECK(parse("", {"server.api_keys.k1=team-a", "scheduler.cache_isolation=none"})
            .scheduler.cache_isolation == "none");
  CHECK(parse("", {"scheduler.cache_isolation=tenant"}).scheduler.cache_isolation == "tenant");
}

TEST_CASE("config: lora.adapters maps names to folders; a dotted --set adds one; bad entries "
          "name the key",
          "[config]") {
  const server_config c =
      parse("lora:\n  adapters:\n    sql: /a/sql\n", {"lora.adapters.chat=/a/chat"});
  CHECK(c.lora.adapters ==
        std::map<std::string, std::string>{{"sql", "/a/sql"}, {"chat", "/a/chat"}});
  CHECK_THROWS_WITH(parse("lora:\n  adapters: [a, b]\n"),
                    Catch::Matchers::Contains("lora.adapters: expected a map of adapter name"));
  CHECK_THROWS_WITH(parse("lora:\n  adapters:\n    sql: [x]\n"),
                    Catch::Matchers::Contains("lora.adapters.sql: expected a folder"));
  CHECK_THROWS_WITH(parse("", {"lora.max_rank=0"}), Catch::Matchers::Contains("lora.max_rank"));
  CHECK_THROWS_WITH(parse("", {"lora.max_cpu_loras=-1"}),
                    Catch::Matchers::Contains("lora.max_cpu_loras"));
}

TEST_CASE("config: an API key entry may restrict its tenant to some models", "[config]") {
  const server_config c = parse(
      "server:\n  api_keys:\n    k1: {tenant: team-a, models: [sql, chat]}\n    k2: team-b\n"
      "    k3: {tenant: team-a, models: [chat, sql]}\n    root: {tenant: ops, admin: true}\n");
  CHECK(c.server.admin_tenants == std::set<std::string>{"ops"});
  CHECK(c.server.api_keys ==
        std::map<std::string, std::string>{
            {"k1", "team-a"}, {"k2", "team-b"}, {"k3", "team-a"}, {"root", "ops"}});
  CHECK(c.server.tenant_models ==
        std::map<std::string, std::vector<std::string>>{{"team-a", {"chat", "sql"}}});
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(parse("server:\n  api_keys:\n    k1: {tenant: a, models: [x]}\n"
                          "    k2: {tenant: a, models: [y]}\n"),
                    Contains("tenant 'a' has another models list"));
  CHECK_THROWS_WITH(parse("server:\n  api_keys:\n    k1: {tenant: a, model: [x]}\n"),
                    Contains("unknown field 'model'"));
  CHECK_THROWS_WITH(parse("server:\n  api_keys:\n    k1: {models: [x]}\n"),
                    Contains("expected a non-empty tenant for API key #1"));
  CHECK_THROWS_WITH(parse("server:\n  api_keys:\n    k1: {tenant: a, models: x}\n"),
                    Contains("models: expected a list"));
  CHECK_THROWS_WITH(parse("server:\n  api_keys:\n    k1: {tenant: a, admin: yes-please}\n"),
                    Contains("admin: expected true or false"));
}

TEST_CASE("config: a map --set replaces server.api_keys, and a dotted one adds a key", "[config]") {
  const std::string yaml = "server:\n  api_keys:\n    old: team-z\n";
  const server_config replaced = parse(yaml, {"server.api_keys={\"k1\":\"team-a\"}"});
  CHECK(replaced.server.api_keys == std::map<std::string, std::string>{{"k1", "team-a"}});
  const server_config added = parse(yaml, {"server.api_keys.k2=team-b"});
  CHECK(added.server.api_keys ==
        std::map<std::string, std::string>{{"old", "team-z"}, {"k2", "team-b"}});
  CHECK(parse(yaml, {"server.api_keys={}"}).server.api_keys.empty());
  CHECK(parse(yaml, {"server.api_keys="}).server.api_keys.empty());
  CHECK(parse("", {"server.api_keys.k1=team-a"}).server.api_keys.size() == 1);
}

TEST_CASE("config: values are typed by YAML, so a string or an int comes out as written",
          "[config]") {
  const server_config c = parse("", {"model.max_model_len=4096", "scheduler.num_kv_blocks=auto",
                                     "model.served_name=123", "telemetry.trace.path="});
  CHECK(c.model.max_model_len == 4096);
  CHECK_FALSE(c.scheduler.num_kv_blocks.has_value());
  CHECK(c.model.served_name == "123");
  CHECK(c.telemetry.trace.path.empty());
}

TEST_CASE("config: an unknown key is an error naming its path and the nearest known key",
          "[config]") {
  CHECK(error_of("scheduler:\n  max_batched_tokns: 5\n") ==
        "test.yaml: unknown config key 'scheduler.max_batched_tokns'; did you mean "
        "'scheduler.max_batched_tokens'?");
  CHECK(error_of("schedular:\n  block_size: 5\n") ==
        "test.yaml: unknown config key 'schedular'; did you mean 'scheduler'?");
  CHECK(error_of("device:\n  sim:\n    thread: 2\n") ==
        "test.yaml: unknown config key 'device.sim.thread'; did you mean 'device.sim.threads'?");
}

TEST_CASE("config: an unknown key far from every known key is named without a suggestion",
          "[config]") {
  CHECK(error_of("colour: blue\n") == "test.yaml: unknown config key 'colour'");
  CHECK(error_of("model:\n  quantization: q4\n") ==
        "test.yaml: unknown config key 'model.quantization'");
}

TEST_CASE("config: an unknown key from --set names the override", "[config]") {
  CHECK(error_of("", {"scheduler.max_batched_tokns=5"}) ==
        "--set scheduler.max_batched_tokns=5: unknown config key 'scheduler.max_batched_tokns'; "
        "did you mean 'scheduler.max_batched_tokens'?");
  CHECK(error_of("", {"colour.shade=blue"}) ==
        "--set colour.shade=blue: unknown config key 'colour'");
  CHECK(error_of("server:\n  api_keys: {k1: team-a}\n", {"server.api_keys.k1.x=1"}) ==
        "--set server.api_keys.k1.x=1: unknown config key 'server.api_keys.k1.x'");
  CHECK(error_of("scheduler:\n  block_size: 16\n", {"scheduler.block_size.x=1"}) ==
        "--set scheduler.block_size.x=1: unknown config key 'scheduler.block_size.x'; did you "
        "mean 'scheduler.block_size'?");
}

TEST_CASE("config: each kind of bad value is an error naming its key path", "[config]") {
  struct bad_case {
    std::string yaml;
    std::string message;
  };
  const std::vector<bad_case> cases = {
      {"scheduler: {block_size: abc}",
       "scheduler.block_size: expected a positive integer, got 'abc'"},
      {"scheduler: {block_size: 0}",
       "scheduler.block_size: expected an integer in [1, 256], got '0'"},
      {"scheduler: {block_size: 512}",
       "scheduler.block_size: expected an integer in [1, 256], got '512'"},
      {"model: {max_model_len: -1}",
       "model.max_model_len: expected a non-negative integer, got '-1'"},
      {"model: {tool_parser: xml}",
       "model.tool_parser: expected one of auto|none|hermes|llama3_json|mistral, got 'xml'"},
      {"device: {backend: gpu}", "device.backend: expected one of auto|cuda|sim, got 'gpu'"},
      {"device: {memory_fraction: 0}",
       "device.memory_fraction: expected a number in (0, 1], got '0'"},
      {"device: {memory_fraction: 1.5}",
       "device.memory_fraction: expected a number in (0, 1], got '1.5'"},
      {"device: {memory_fraction: lots}",
       "device.memory_fraction: expected a number in (0, 1], got 'lots'"},
      {"device: {sim: {threads: -2}}",
       "device.sim.threads: expected a non-negative integer, got '-2'"},
      {"device: {sim: {memory_mb: 0}}",
       "device.sim.memory_mb: expected a positive integer, got '0'"},
      {"engine: {gemm_autotune: yes}", "engine.gemm_autotune: expected true or false, got 'yes'"},
      {"server: {port: 65536}", "server.port: expected an integer in [0, 65535], got '65536'"},
      {"server: {port: -1}", "server.port: expected an integer in [0, 65535], got '-1'"},
      {"server: {host: [a, b]}", "server.host: expected a string, got a list"},
      {"server: {api_keys: [k1]}",
       "server.api_keys: expected a map of API key to tenant, got a list"},
      {"server: {max_waiting: 0}", "server.max_waiting: expected a positive integer, got '0'"},
      {"server: {max_body_bytes: -5}",
       "server.max_body_bytes: expected a positive integer, got '-5'"},
      {"server: {max_stream_buffer_bytes: -1}",
       "server.max_stream_buffer_bytes: expected a non-negative integer, got '-1'"},
      {"server: {cors_allowed_origins: \"*\"}",
       "server.cors_allowed_origins: expected a list of origins (or [\"*\"]), got the string "
       "\"*\""},
      {"server: {cors_allowed_origins: [\"*\", \"https://app.example/\"]}",
       "server.cors_allowed_origins: entry #2: expected \"*\" or an origin like "
       "https://app.example:8443 (scheme and host, no path), got the string "
       "\"https://app.example/\""},
      {"server: {cors_allowed_origins: [app.example]}",
       "server.cors_allowed_origins: entry #1: expected \"*\" or an origin like "
       "https://app.example:8443 (scheme and host, no path), got 'app.example'"},
      {"scheduler: {max_num_seqs: 0}",
       "scheduler.max_num_seqs: expected a positive integer, got '0'"},
      {"scheduler: {max_num_seqs: 3000000000}",
       "scheduler.max_num_seqs: expected an integer in [1, 2147483647], got '3000000000'"},
      {"scheduler: {max_batched_tokens: many}",
       "scheduler.max_batched_tokens: expected a positive integer, got 'many'"},
      {"scheduler: {num_kv_blocks: 0}",
       "scheduler.num_kv_blocks: expected auto or a positive integer, got '0'"},
      {"scheduler: {prefix_caching: maybe}",
       "scheduler.prefix_caching: expected true or false, got 'maybe'"},
      {"scheduler: {cache_isolation: user}",
       "scheduler.cache_isolation: expected one of auto|none|tenant, got 'user'"},
      {"speculative: {prompt_lookup: {enabled: 1}}",
       "speculative.prompt_lookup.enabled: expected true or false, got '1'"},
      {"speculative: {prompt_lookup: {num_draft: 17}}",
       "speculative.prompt_lookup.num_draft: expected an integer in [1, 16], got '17'"},
      {"speculative: {prompt_lookup: {min_ngram: 0}}",
       "speculative.prompt_lookup.min_ngram: expected a positive integer, got '0'"},
      {"speculative: {shared_cache_mb: -1}",
       "speculative.shared_cache_mb: expected a non-negative integer, got '-1'"},
      {"speculative: {shared_cache_scopes: 0}",
       "speculative.shared_cache_scopes: expected a positive integer, got '0'"},
      {"telemetry: {metrics: {on: true}}", "telemetry.metrics: expected true or false, got a map"},
      {"telemetry: {trace: {sample: 1.01}}",
       "telemetry.trace.sample: expected a number in [0, 1], got '1.01'"},
      {"telemetry: {trace: {path: {a: b}}}", "telemetry.trace.path: expected a string, got a map"},
  };
  for (const bad_case& bad : cases) {
    INFO(bad.yaml);
    CHECK(error_of(bad.yaml) == "test.yaml: " + bad.message);
  }
}

TEST_CASE("config: an integer key rejects fractions, trailing text and quoted numbers",
          "[config]") {
  CHECK(error_of("scheduler: {max_num_seqs: 1.5}") ==
        "test.yaml: scheduler.max_num_seqs: expected a positive integer, got '1.5'");
  CHECK(error_of("scheduler: {max_num_seqs: 12abc}") ==
        "test.yaml: scheduler.max_num_seqs: expected a positive integer, got '12abc'");
  CHECK(error_of("scheduler: {max_num_seqs: \"12\"}") ==
        "test.yaml: scheduler.max_num_seqs: expected a positive integer, got the string \"12\"");
  CHECK(error_of("scheduler: {max_num_seqs: 1e3}") ==
        "test.yaml: scheduler.max_num_seqs: expected a positive integer, got '1e3'");
  CHECK(error_of("scheduler: {max_num_seqs: }") ==
        "test.yaml: scheduler.max_num_seqs: expected a positive integer, got an empty value");
  CHECK(parse("scheduler: {max_num_seqs: +12}").scheduler.max_num_seqs == 12);
}

TEST_CASE("config: a number key takes decimals and exponents but not nan or inf", "[config]") {
  CHECK(parse("device: {memory_fraction: .5}").device.memory_fraction == 0.5);
  CHECK(parse("device: {memory_fraction: 1}").device.memory_fraction == 1.0);
  CHECK(parse("telemetry: {trace: {sample: 25e-2}}").telemetry.trace.sample == 0.25);
  CHECK(parse("telemetry: {trace: {sample: +0.5}}").telemetry.trace.sample == 0.5);
  for (const std::string text : {".nan", "nan", ".inf", "0x0.8p0", "'0.5'", "0.5.1"}) {
    INFO(text);
    CHECK_THAT(error_of("telemetry: {trace: {sample: " + text + "}}"),
               Catch::Matchers::StartsWith(
                   "test.yaml: telemetry.trace.sample: expected a number in [0, 1], got"));
  }
}

TEST_CASE("config: a bool key takes YAML bools only", "[config]") {
  CHECK(parse("telemetry: {metrics: False}").telemetry.metrics == false);
  CHECK(parse("telemetry: {metrics: TRUE}").telemetry.metrics == true);
  for (const std::string text : {"yes", "on", "0", "'true'"}) {
    INFO(text);
    CHECK_THAT(error_of("telemetry: {metrics: " + text + "}"),
               Catch::Matchers::StartsWith("test.yaml: telemetry.metrics: expected true or false"));
  }
}

TEST_CASE("config: server.api_keys errors count entries and never quote a key", "[config]") {
  CHECK(error_of("server:\n  api_keys:\n    secret1: team-a\n    secret2: ''\n") ==
        "test.yaml: server.api_keys: expected a non-empty tenant for API key #2, got the string "
        "\"\"");
  CHECK(error_of("server:\n  api_keys:\n    secret1:\n") ==
        "test.yaml: server.api_keys: expected a non-empty tenant for API key #1, got an empty "
        "value");
  CHECK(error_of("server:\n  api_keys:\n    '': team-a\n") ==
        "test.yaml: server.api_keys: expected a non-empty string as API key #1, got an empty one");
  CHECK(error_of("server:\n  api_keys:\n    s: a\n    s: b\n") ==
        "test.yaml: server.api_keys: API key #2 repeats an earlier key");
  CHECK(error_of("server:\n  api_keys: {s: a}\n", {"server.api_keys.s2="}) ==
        "--set server.api_keys.s2=: server.api_keys: expected a non-empty tenant for API key #2, "
        "got an empty value");
}

TEST_CASE("config: a section that is not a map is an error naming it", "[config]") {
  CHECK(error_of("scheduler: 5\n") == "test.yaml: scheduler: expected a map, got '5'");
  CHECK(error_of("device:\n  sim: [1, 2]\n") ==
        "test.yaml: device.sim: expected a map, got a list");
  CHECK(error_of("- a\n- b\n") ==
        "test.yaml: expected a map of config sections at the top level, got a list");
  // Setting a key inside it does not hide the file's mistake.
  CHECK(error_of("scheduler: 5\n", {"scheduler.block_size=8"}) ==
        "test.yaml: scheduler: expected a map, got '5'");
  CHECK(error_of("server: {api_keys: k1}\n", {"server.api_keys.k2=team-b"}) ==
        "test.yaml: server.api_keys: expected a map, got 'k1'");
  CHECK(error_of("colour: blue\n", {"colour.shade=dark"}) ==
        "test.yaml: unknown config key 'colour'");
}

TEST_CASE("config: a duplicate key is an error naming it", "[config]") {
  CHECK(error_of("scheduler:\n  block_size: 8\n  block_size: 16\n") ==
        "test.yaml: duplicate config key 'scheduler.block_size'");
}

TEST_CASE("config: a YAML syntax error names the line", "[config]") {
  CHECK_THAT(error_of("model:\n  path: x\n  tool_parser: [auto\n"),
             Catch::Matchers::StartsWith("test.yaml: YAML syntax error at line 4"));
  CHECK(error_of("scheduler:\n  block_size: 16\n    max_num_seqs: 2\n") ==
        "test.yaml: YAML syntax error at line 3, column 17: illegal map value");
}

TEST_CASE("config: a bad --set value names the override", "[config]") {
  CHECK(error_of("", {"scheduler.block_size=abc"}) ==
        "--set scheduler.block_size=abc: scheduler.block_size: expected a positive integer, got "
        "'abc'");
  CHECK(error_of("scheduler: {block_size: 8}", {"scheduler.block_size=abc"}) ==
        "--set scheduler.block_size=abc: scheduler.block_size: expected a positive integer, got "
        "'abc'");
  // The file's own mistake is still the file's, whatever else is overridden.
  CHECK(error_of("scheduler: {block_size: abc}", {"scheduler.max_num_seqs=4"}) ==
        "test.yaml: scheduler.block_size: expected a positive integer, got 'abc'");
  CHECK(error_of("", {"device={backend: gpu}"}) ==
        "--set device={backend: gpu}: device.backend: expected one of auto|cuda|sim, got 'gpu'");
  CHECK(error_of("", {"device.backend=[auto"}) ==
        "--set device.backend=[auto: the value is not valid YAML: end of sequence flow not found");
}

TEST_CASE("config: an override without '=' or with an empty key is an error naming it",
          "[config]") {
  CHECK(error_of("", {"scheduler.block_size"}) ==
        "--set scheduler.block_size: expected key.path=value");
  CHECK(error_of("", {"=5"}) == "--set =5: expected key.path=value, and the key is empty");
  CHECK(error_of("", {" =5"}) == "--set  =5: expected key.path=value, and the key is empty");
  CHECK(error_of("", {"scheduler..block_size=5"}) ==
        "--set scheduler..block_size=5: the key 'scheduler..block_size' has an empty part");
  CHECK(parse("", {" scheduler.block_size =5"}).scheduler.block_size == 5);
}

TEST_CASE("config: num_kv_blocks is auto or a positive integer", "[config]") {
  CHECK_FALSE(parse("scheduler: {num_kv_blocks: auto}").scheduler.num_kv_blocks.has_value());
  CHECK_FALSE(parse("scheduler: {num_kv_blocks: 'auto'}").scheduler.num_kv_blocks.has_value());
  CHECK(parse("scheduler: {num_kv_blocks: 1000}").scheduler.num_kv_blocks ==
        std::optional<std::int64_t>(1000));
  CHECK_FALSE(parse("scheduler: {num_kv_blocks: 12}", {"scheduler.num_kv_blocks=auto"})
                  .scheduler.num_kv_blocks.has_value());
  CHECK(parse("", {"scheduler.num_kv_blocks=12"}).scheduler.num_kv_blocks ==
        std::optional<std::int64_t>(12));
  CHECK(error_of("scheduler: {num_kv_blocks: Auto}") ==
        "test.yaml: scheduler.num_kv_blocks: expected auto or a positive integer, got 'Auto'");
  CHECK(error_of("scheduler: {num_kv_blocks: 2.5}") ==
        "test.yaml: scheduler.num_kv_blocks: expected auto or a positive integer, got '2.5'");
}

TEST_CASE("config: max_ngram below min_ngram is an error naming both keys", "[config]") {
  CHECK(error_of("speculative: {prompt_lookup: {min_ngram: 3, max_ngram: 2}}") ==
        "test.yaml: speculative.prompt_lookup.max_ngram: expected at least "
        "speculative.prompt_lookup.min_ngram (3), got '2'");
  CHECK(error_of("", {"speculative.prompt_lookup.min_ngram=5"}) ==
        "--set speculative.prompt_lookup.min_ngram=5: speculative.prompt_lookup.max_ngram: "
        "expected at least speculative.prompt_lookup.min_ngram (5), got '4'");
  CHECK(parse("speculative: {prompt_lookup: {min_ngram: 3, max_ngram: 3}}")
            .speculative.prompt_lookup.max_ngram == 3);
}

TEST_CASE("config: a disk tier without a folder or without a host tier is an error naming the "
          "key to set",
          "[config]") {
  CHECK(error_of("cache: {host_tier_mb: 64, disk_tier_gb: 2}") ==
        "test.yaml: cache.disk_tier_path: a folder for the disk tier is needed when "
        "cache.disk_tier_gb is set");
  CHECK(error_of("cache: {disk_tier_path: /tmp/kv}", {"cache.disk_tier_gb=2"}) ==
        "--set cache.disk_tier_gb=2: cache.host_tier_mb: the disk tier sits behind the host tier "
        "(blocks go to disk from host memory and come back through it): set cache.host_tier_mb "
        "too");
  CHECK(error_of("cache: {disk_tier_gb: -1}").find("cache.disk_tier_gb") != std::string::npos);
  CHECK(parse("cache: {disk_tier_path: /tmp/kv}").cache.disk_tier_gb == 0);  // off: no error
}

TEST_CASE("config: load_config reads a file and applies overrides after it", "[config]") {
  const temp_file file("scheduler:\n  block_size: 32\n");
  CHECK(load_config(file.path(), {}).scheduler.block_size == 32);
  CHECK(load_config(file.path(), {"scheduler.block_size=8"}).scheduler.block_size == 8);
  const temp_file bad("scheduler:\n  block_size: abc\n");
  CHECK_THROWS_WITH(load_config(bad.path(), {}),
                    bad.path() + ": scheduler.block_size: expected a positive integer, got 'abc'");
}

TEST_CASE("config: an unreadable file is an error naming it", "[config]") {
  const std::string missing = COURIER_TEST_DATA "/no-such-config.yaml";
  CHECK_THROWS_WITH(load_config(missing, {}),
                    missing + ": cannot read the config file: No such file or directory");
  const std::string folder = COURIER_TEST_DATA;
  CHECK_THROWS_WITH(load_config(folder, {}),
                    folder + ": cannot read the config file: it is a directory");
}

TEST_CASE("config: an error message is one line, however the value is written", "[config]") {
  const std::string message = error_of("device:\n  backend: |\n    two\n    lines\n");
  CHECK(message ==
        "test.yaml: device.backend: expected one of auto|cuda|sim, got "
        "the string \"two\\nlines\\n\"");
  CHECK(message.find('\n') == std::string::npos);
}

}  // namespace courier::config

namespace courier::config {

TEST_CASE("config: cluster keys: replicas are host:port, routing one of three, parallel and "
          "events read",
          "[config]") {
  const server_config c = parse(
      "cluster: {replicas: [\"10.0.0.1:7000\", \"replica-b:7001\"], routing: round_robin}\n"
      "parallel: {tensor_size: 2}\nkv_events: {endpoint: \"tcp://*:5557\", topic: kv, "
      "replay_endpoint: \"tcp://*:5558\", buffer_steps: 64}");
  CHECK(c.cluster.replicas == std::vector<std::string>{"10.0.0.1:7000", "replica-b:7001"});
  CHECK(c.cluster.routing == "round_robin");
  CHECK(c.parallel.tensor_size == 2);
  CHECK(c.kv_events.endpoint == "tcp://*:5557");
  CHECK(c.kv_events.topic == "kv");
  CHECK(c.kv_events.replay_endpoint == "tcp://*:5558");
  CHECK(c.kv_events.buffer_steps == 64);
  CHECK(parse("").kv_events.buffer_steps == 10000);  // vLLM's default
  CHECK_THAT(error_of("kv_events: {buffer_steps: -1}"), Catch::Contains("kv_events.buffer_steps"));
  CHECK_THAT(error_of("cluster: {replicas: [\"no-port\"]}"),
             Catch::Contains("cluster.replicas") && Catch::Contains("host:port"));
  CHECK_THAT(error_of("cluster: {replicas: [\"h:99999\"]}"), Catch::Contains("cluster.replicas"));
  CHECK_THAT(error_of("cluster: {routing: random}"), Catch::Contains("cluster.routing"));
  CHECK_THAT(error_of("cluster: {heartbeat_ms: 1}"), Catch::Contains("cluster.heartbeat_ms"));
}

}  // namespace courier::config
