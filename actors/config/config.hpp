#pragma once
// The server configuration: one YAML file plus --set overrides, loaded once and validated.
// Key names are fixed (docs/ARCHITECTURE.md, "Config keys"); every key has a default here.
#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace courier::config {

// An unknown key, a bad value or an unreadable file. what() names the key path (e.g.
// "scheduler.max_batched_tokens") and, when there is one, the file.
class config_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct model_section {
  std::string path;                 // HF model folder
  std::string served_name;          // empty: the folder's base name
  std::int64_t max_model_len = 0;   // 0: the model's max_position_embeddings
  // How tool calls and reasoning are read out of the generated text; auto: from the chat
  // template (<tool_call>: hermes, [TOOL_CALLS]: mistral, <|python_tag|>: llama3_json; <think>:
  // reasoning).
  std::string tool_parser = "auto";       // auto | none | hermes | llama3_json | mistral
  std::string reasoning_parser = "auto";  // auto | none | qwen3 | deepseek_r1
};

struct sim_section {
  std::int32_t threads = 0;         // 0: all cores
  std::int64_t memory_mb = 4096;
  // The least time each batch of KV tier copies on the copy stream takes (a simulated transfer:
  // requests wait for it while others compute).
  std::int64_t copy_latency_ms = 0;
};

struct device_section {
  std::string backend = "auto";     // auto | cuda | sim
  // cuda: the GPU (CUDA ordinal, after CUDA_VISIBLE_DEVICES) of rank 0; rank r uses index + r.
  std::int32_t index = 0;
  double memory_fraction = 0.9;     // (0, 1]
  sim_section sim;
};

struct engine_section {
  bool gemm_autotune = true;  // cuda: time cuBLASLt's candidates per GEMM shape, keep the fastest
  std::int32_t graph_max_batch = 256;  // decode steps up to this many rows replay graphs; 0: off
  bool pipeline = true;  // launch the next step before the one in flight has finished
};

// Tensor parallelism: the model split across tensor_size devices (CUDA: GPUs 0..N-1; sim: N
// simulated devices), one engine worker per rank, every rank stepping the same plan.
struct parallel_section {
  std::int32_t tensor_size = 1;
};

// The prefix cache's events on a ZeroMQ PUB socket in vLLM's format
// (actors/telemetry/kv_event_publisher.hpp). Empty endpoint: none published.
struct kv_events_section {
  std::string endpoint;  // e.g. tcp://*:5557
  std::string topic;     // every message's first frame
  std::string replay_endpoint;       // a ROUTER for replays of missed batches; empty: none
  std::int64_t buffer_steps = 10000;  // batches kept for replay
};

// Replicas and the front end routing to them (actors/cluster/README.md).
struct cluster_section {
  // A replica: publish the scheduler on host:port through CAF's middleman (port 0: any free
  // one). Empty: not a replica.
  std::string listen;
  // A front end: route every request to one of these replicas (host:port each) and load no
  // model weights (model.path still gives the tokenizer and chat template). Empty: serve locally.
  std::vector<std::string> replicas;
  std::string routing = "cache_aware";  // cache_aware | least_loaded | round_robin
  std::int64_t heartbeat_ms = 500;      // a replica silent for 3 of these is down
  std::int64_t balance_abs = 32;        // cache_aware: loads this close are balanced...
  double balance_rel = 1.5;             // ...or this close as a ratio
  double cache_threshold = 0.5;         // share of a prompt's blocks a replica must hold
};

struct server_section {
  std::string host = "127.0.0.1";
  std::int32_t port = 8000;                       // 0..65535 (0: any free port)
  std::map<std::string, std::string> api_keys;    // key -> tenant; empty: no auth
  // Tenants restricted to some models (an api_keys entry {tenant: T, models: [...]}): the base
  // model's served name and LoRA adapters' names they may use. A tenant not here may use all.
  std::map<std::string, std::vector<std::string>> tenant_models;
  // Tenants whose keys may load and unload LoRA adapters (an entry {tenant: T, admin: true}).
  std::set<std::string> admin_tenants;
  std::int64_t max_waiting = 1024;
  std::int64_t max_body_bytes = 16 * 1024 * 1024;
  std::int32_t max_json_depth = 64;                 // deepest nesting of a request body
  std::int64_t max_sequences_per_request = 64;      // prompts x n of one request
  std::int32_t max_cached_grammars = 64;  // structured outputs: compiled grammars kept, by spec
  // What their mask caches hold together at most (one grammar's alone: a quarter of it).
  std::int32_t grammar_cache_mb = 512;
  // What compiling one grammar may cost (grammar::compile_limits; the time is CPU time): a
  // grammar past any of these
  // is refused with a 400 naming the key. The defaults keep a 2-core machine serving.
  std::int32_t grammar_compile_ms = 1000;
  std::int32_t grammar_compile_mb = 100;
  std::int64_t grammar_compile_work = std::int64_t{1} << 28;  // the compiler's inner-loop steps
  std::int32_t grammar_max_branches = 512;  // parse stacks one grammar position may start
  std::int32_t admission_nice = 10;  // admission's threads (CAF's pooled workers and the text
                                     // threads) run this much nicer than the generation loop
  std::int32_t admission_threads = 0;  // threads that parse and tokenize bodies; 0: a quarter
                                       // of the hardware threads, at least 1
  // Most bytes of a stream queued for a client that does not read; past it the client is
  // disconnected and its request cancelled. 0: unbounded.
  std::int64_t max_stream_buffer_bytes = 8 * 1024 * 1024;
  // /v1/responses kept (store): memory for them together (0: none kept), and each one's life.
  std::int32_t responses_store_mb = 64;
  std::int32_t responses_store_s = 3600;
  std::vector<std::string> cors_allowed_origins;  // exact origins or "*"; empty: no CORS
  std::int32_t max_n = 16;  // most choices (`n`) one request may ask for
  // The web page at `/` (chat playground, dashboard): auto | true | false; auto serves it when
  // `host` is a loopback address (127.x.x.x, ::1, localhost) and not otherwise.
  std::string web_ui = "auto";
  // CAF's pooled worker threads (admission's actors, telemetry, a front end's router); the
  // scheduler and the engine run on threads of their own.
  std::int32_t actor_threads = 2;
};

struct scheduler_section {
  std::int32_t max_num_seqs = 256;
  std::int32_t max_batched_tokens = 2048;
  std::int32_t block_size = 16;
  std::optional<std::int64_t> num_kv_blocks;      // nullopt: auto (from the memory budget)
  bool prefix_caching = true;
  bool overlap = true;                            // plan step N+1 while step N runs
  // Hybrid models: recurrent-state slots (their sequences running at once); 0: max_num_seqs,
  // fewer when half the memory left after weights and workspaces cannot hold them.
  std::int32_t state_slots = 0;
  // auto | none | tenant; validation turns auto into tenant when server.api_keys is set, else
  // into none, so a loaded config holds none or tenant.
  std::string cache_isolation = "auto";
};

// The KV tiers behind the device's blocks, and hybrid models' prefix cache (snapshots of their
// Mamba-2 state at cached prefixes).
struct cache_section {
  // Host memory for KV blocks (pinned on CUDA): blocks the prefix cache evicts from the device
  // are kept there and copied back for a later prompt sharing them, and a preempted sequence's
  // computed blocks are swapped out there and back in when it resumes; 0: no host tier.
  std::int64_t host_tier_mb = 0;
  // Write-through: each block the prefix cache stores is copied to the host tier on the copy
  // stream beside the steps, so that its eviction later copies nothing in the step's stream
  // order; false: blocks are copied out when evicted (write-back: less PCIe traffic).
  bool host_tier_write_through = true;
  // How a preempted sequence's KV is kept: auto (swap when copying it out and back is estimated
  // cheaper than recomputing it, and the host tier has room), swap (whenever it has room), or
  // recompute (always).
  std::string preemption = "auto";
  // Device snapshot rows; 0: auto (twice the state slots, within a quarter of the memory left
  // after weights and workspaces). Hybrid models reuse a prefix only where a snapshot is kept.
  std::int32_t ssm_snapshots = 0;
  // An intermediate snapshot every this many prompt tokens (rounded down to a multiple of
  // scheduler.block_size, at least one block); 0: none (snapshots at the prompt's end, branch
  // points and the output's end still are).
  std::int32_t ssm_checkpoint_tokens = 512;
  bool ssm_decode_snapshots = true;  // tail snapshots at decode-time block boundaries
  // Host memory for snapshots evicted from the device that are worth copying back (their
  // prefix takes longer to recompute than the copy); 0: evicted snapshots are dropped.
  std::int64_t ssm_host_tier_mb = 0;
  // The disk tier behind the host tier: a file in this folder (`courier-kv.blocks`) of
  // disk_tier_gb, reserved at start. Blocks the host tier keeps are written there too, so one it
  // evicts is still found, read back into host memory and then copied to the device. Needs
  // host_tier_mb. Empty path or 0 GB: no disk tier.
  std::string disk_tier_path;
  double disk_tier_gb = 0;
  // Keep the file's blocks across restarts (checked against the model's, the tokenizer's and
  // the layout's fingerprint, and per block a checksum, before reuse); false: start empty.
  bool disk_tier_persist = false;
  std::int32_t disk_tier_io_threads = 4;  // reads and writes at once (the disk's queue depth)
  // A request waits this long at most for its blocks' reads: then it queues without those
  // still being read (a slow or stuck disk delays nothing longer).
  std::int64_t disk_tier_read_timeout_ms = 10000;
};

struct prompt_lookup_section {
  bool enabled = false;
  std::int32_t num_draft = 4;
  std::int32_t min_ngram = 2;
  std::int32_t max_ngram = 4;
};

struct speculative_section {
  prompt_lookup_section prompt_lookup;
  std::int64_t shared_cache_mb = 0;
  std::int32_t shared_cache_scopes = 4;
};

// LoRA adapters (PEFT folders) served beside the base model: a request names one as its
// `model`. The engine keeps max_loras of them on the device at once (a slot pool of rank
// max_rank), loading the others into slots as requests need them.
struct lora_section {
  std::map<std::string, std::string> adapters;  // name -> folder, loaded at start
  std::int32_t max_loras = 4;
  std::int32_t max_rank = 16;
  // Adapters kept in host memory (f32 copies, what a slot is loaded from); the others are read
  // from their folders again when a request needs one (it waits meanwhile). 0: all of them.
  std::int32_t max_cpu_loras = 0;
  // POST /v1/load_lora_adapter and /v1/unload_lora_adapter (vLLM's) are served, and the slot
  // pool is made even with no adapters at start. With server.api_keys, only admin keys may.
  bool runtime_loading = false;
  // A read of an adapter's folder (a load at run time, or a host copy read again) that has not
  // finished by then is answered as failed; the read itself is left to end on its own.
  std::int32_t load_timeout_s = 120;
};

struct trace_section {
  std::string path;                 // empty: tracing off
  double sample = 1.0;              // [0, 1]
  std::int64_t flush_ms = 100;      // buffered spans are written this often
  // Spans buffered between flushes at most; past it they are dropped (and counted).
  std::int64_t buffer_spans = std::int64_t{1} << 20;
};

struct telemetry_section {
  bool metrics = true;
  trace_section trace;
};

struct server_config {
  model_section model;
  device_section device;
  engine_section engine;
  parallel_section parallel;
  kv_events_section kv_events;
  cluster_section cluster;
  server_section server;
  scheduler_section scheduler;
  cache_section cache;
  speculative_section speculative;
  lora_section lora;
  telemetry_section telemetry;
};

// Loads `yaml_path` (empty: defaults only), then applies each "key.path=value" override in order
// (the value parsed as YAML), then validates. Throws config_error.
server_config load_config(const std::string& yaml_path, const std::vector<std::string>& overrides);

// scheduler.cache_isolation with `auto` resolved as load_config resolves it: caches hold
// tenants' data, so with API keys they are per tenant ("tenant"), else shared ("none").
std::string cache_isolation_of(const server_config& c);

// Every key's path ("model.path", ...), in the schema's order.
std::vector<std::string> config_keys();

// Generated from the schema (config_reference.cpp): docs/config-keys.md (every key's type,
// default and help), and configs/default.yaml: every key at its default, except
// bundled_model_overrides() (the bundled tiny model on the sim), each with its brief comment. `courier config-reference [--yaml]` prints them; a test holds both files
// to them (scripts/gen-config-docs.sh writes them).
std::string config_keys_markdown();
std::string default_config_yaml();
const std::vector<std::string>& bundled_model_overrides();

// The same from YAML text, for tests; `source` names it in errors.
server_config parse_config(const std::string& yaml_text, const std::string& source,
                           const std::vector<std::string>& overrides);

}  // namespace courier::config
