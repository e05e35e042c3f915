// The schema table: every config key, its reader's bounds and its docs (config_schema.hpp).
#include "actors/config/config_schema.hpp"

#include <cstdlib>
#include <limits>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "actors/config/config_values.hpp"

namespace courier::config {
namespace {

using namespace values;
using docs = key_docs;

// A double as YAML and the README show it: shortest form, integral values without a point.
std::string show_number(double v) { return fmt::format("{}", v); }

std::string show_bound(std::int64_t v) {
  return v == std::numeric_limits<std::int32_t>::max() ? "2^31-1" : std::to_string(v);
}

// A string as a YAML scalar: plain when it reads back as itself, else double-quoted.
std::string show_string(const std::string& s) {
  char* end = nullptr;
  const bool number = !s.empty() && (std::strtod(s.c_str(), &end), end == s.c_str() + s.size());
  const bool plain = !s.empty() && !number &&
                     s.find_first_of(":#{}[],&*!|>'\"%@`") == std::string::npos &&
                     s.front() != ' ' && s.back() != ' ' && s != "true" && s != "false" &&
                     s != "null" && s != "~";
  return plain ? s : "\"" + s + "\"";
}

std::string show_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    out += (i ? ", " : "") + show_string(items[i]);
  }
  return out + "]";
}

template <typename Field>
key_spec integer_key(std::string path, std::int64_t min, std::int64_t max, Field field, docs d) {
  std::string range = max == k_no_max ? fmt::format("`>= {}`", min)
                                      : fmt::format("`{}..{}`", min, show_bound(max));
  return {std::move(path), false,
          [=](const YAML::Node& node, server_config& config) {
            auto& target = field(config);
            using target_type = std::remove_reference_t<decltype(target)>;
            const std::int64_t type_max = std::numeric_limits<target_type>::max();
            target = static_cast<target_type>(read_integer(node, min, max, type_max));
          },
          "int", std::move(range),
          [=](const server_config& c) { return std::to_string(field(c)); },
          std::move(d)};
}

template <typename Field>
key_spec number_key(std::string path, double min, double max, bool min_open, Field field,
                    docs d) {
  std::string range = fmt::format("`{}{}, {}]`", min_open ? '(' : '[', show_number(min),
                                  show_number(max));
  return {std::move(path), false,
          [=](const YAML::Node& node, server_config& config) {
            field(config) = read_number(node, min, max, min_open);
          },
          "number", std::move(range),
          [=](const server_config& c) { return show_number(field(c)); },
          std::move(d)};
}

template <typename Field>
key_spec bool_key(std::string path, Field field, docs d) {
  return {std::move(path), false,
          [=](const YAML::Node& node, server_config& config) { field(config) = read_bool(node); },
          "bool", "",
          [=](const server_config& c) {
            return std::string(field(c) ? "true" : "false");
          },
          std::move(d)};
}

template <typename Field>
key_spec string_key(std::string path, Field field, docs d) {
  return {std::move(path), false,
          [=](const YAML::Node& node, server_config& config) { field(config) = read_string(node); },
          "string", "",
          [=](const server_config& c) { return show_string(field(c)); },
          std::move(d)};
}

template <typename Field>
key_spec choice_key(std::string path, std::vector<std::string> allowed, Field field, docs d) {
  std::string range;
  for (const std::string& a : allowed) range += (range.empty() ? "`" : ", `") + a + "`";
  return {std::move(path), false,
          [=](const YAML::Node& node, server_config& config) {
            field(config) = read_choice(node, allowed);
          },
          "enum", std::move(range),
          [=](const server_config& c) { return field(c); },
          std::move(d)};
}

// A key read by its own reader (or, apply null, by the config builder: a map).
key_spec custom_key(std::string path, bool is_map, std::string type,
                    std::function<void(const YAML::Node&, server_config&)> apply,
                    std::function<std::string(const server_config&)> show, docs d) {
  return {std::move(path), is_map, std::move(apply), std::move(type), "", std::move(show),
          std::move(d)};
}

// The field a key writes (and shows: const), as a lambda; keeps the table below readable.
// clang-format off
#define COURIER_FIELD(member) [](auto& c) -> auto& { return c.member; }
// clang-format on

// The schema by section (in the order of the docs), each part a function of its own.

// model.path .. model.reasoning_parser.
std::vector<key_spec> model_keys() {
  return {
      string_key("model.path", COURIER_FIELD(model.path),
      docs{"Hugging Face model folder",
          "a Hugging Face model folder (Llama, Qwen2/2.5, Qwen3; NemotronH)"}),
      string_key("model.served_name", COURIER_FIELD(model.served_name),
      docs{"the \"model\" name clients send",
          "the model name of the API; empty: the folder's base name"}),
      integer_key("model.max_model_len", 0, k_no_max, COURIER_FIELD(model.max_model_len),
      docs{"0: the model's max_position_embeddings",
          "0: the model's `max_position_embeddings`"}),
      choice_key("model.tool_parser", {"auto", "none", "hermes", "llama3_json", "mistral"},
                 COURIER_FIELD(model.tool_parser),
      docs{"auto (from the chat template) | none | hermes | llama3_json | mistral",
          "`hermes`: Qwen 2.5/3 `<tool_call>`; `llama3_json`: Llama 3.1+; `mistral`: "
          "`[TOOL_CALLS]`. How tool calls are read out of chat output and written when "
          "`tool_choice` forces one. `auto`: from the chat template's text (`<tool_call>`, "
          "`[TOOL_CALLS]`, `<|python_tag|>`); none found: `hermes`"}),
      choice_key("model.reasoning_parser", {"auto", "none", "qwen3", "deepseek_r1"},
                 COURIER_FIELD(model.reasoning_parser),
      docs{"auto (<think> in the chat template) | none | qwen3 | deepseek_r1",
          "`<think>…</think>` goes to `reasoning_content`. `auto`: on when "
          "the chat template mentions `<think>`. Either kind starts in reasoning when the "
          "rendered prompt ends with `<think>`"}),
  };
}

// device.backend .. device.sim.copy_latency_ms.
std::vector<key_spec> device_keys() {
  return {
      choice_key("device.backend", {"auto", "cuda", "sim"}, COURIER_FIELD(device.backend),
      docs{"auto | cuda | sim (the CPU reference backend)",
          ""}),
      integer_key("device.index", 0, 1023, COURIER_FIELD(device.index),
      docs{"cuda: the GPU of rank 0 (CUDA ordinal); rank r uses index + r",
          "cuda: the GPU (CUDA ordinal, after `CUDA_VISIBLE_DEVICES`) of rank 0; rank r of "
          "`parallel.tensor_size` uses `index + r`; an index past the GPUs this process "
          "sees stops the start naming this key. The sim ignores it"}),
      number_key("device.memory_fraction", 0.0, 1.0, true, COURIER_FIELD(device.memory_fraction),
      docs{"share of device memory courier may use, in (0, 1]",
          "the share of the device memory courier may use"}),
      integer_key("device.sim.threads", 0, k_no_max, COURIER_FIELD(device.sim.threads),
      docs{"sim compute threads; 0: all cores",
          "the sim's compute threads; 0: all cores"}),
      integer_key("device.sim.memory_mb", 1, k_no_max, COURIER_FIELD(device.sim.memory_mb),
      docs{"memory the sim backend pretends to have",
          "the sim's device memory is host memory touched as it is first used: under load "
          "the server's resident memory grows towards it as the KV pool is used through "
          "(the prefix cache keeps what requests leave), then stays"}),
      integer_key("device.sim.copy_latency_ms", 0, 60000,
                  COURIER_FIELD(device.sim.copy_latency_ms),
      docs{"least time a batch of KV tier copies takes (tests)",
          "the least time each batch of KV tier copies on the sim's copy stream takes (a "
          "simulated transfer)"}),
  };
}

// engine.gemm_autotune .. engine.pipeline.
std::vector<key_spec> engine_keys() {
  return {
      bool_key("engine.gemm_autotune", COURIER_FIELD(engine.gemm_autotune),
      docs{"cuda: time GEMM algorithms per shape, keep the fastest",
          "cuda only: time cuBLASLt's candidate algorithms on each GEMM shape's first use "
          "and keep the fastest (`gpu/cuda/README.md`); `false`: its first heuristic, "
          "untimed"}),
      integer_key("engine.graph_max_batch", 0, 4096, COURIER_FIELD(engine.graph_max_batch),
      docs{"decode steps up to this many rows replay graphs; 0: off",
          "decode steps of up to this many rows (capped by `scheduler.max_num_seqs`) are "
          "padded to 1, 2, 4, 8 or a multiple of 16 rows and replay a graph captured per "
          "size: CUDA graphs on cuda, recorded ops on sim (`gpu/model/README.md`); `0`: "
          "every step runs op by op"}),
      bool_key("engine.pipeline", COURIER_FIELD(engine.pipeline),
      docs{"launch the next step before the one in flight finishes",
          "the engine launches a step and answers it once the device has finished it, "
          "launching the next plan behind it meanwhile: with `scheduler.overlap` the device "
          "always has the next step queued, and a row following the step in flight is fed "
          "its token on the device (`actors/engine/README.md`); `false`: each step is "
          "waited for before the next plan is read"}),
  };
}

// parallel.tensor_size .. parallel.tensor_size.
std::vector<key_spec> parallel_keys() {
  return {
      integer_key("parallel.tensor_size", 1, 64, COURIER_FIELD(parallel.tensor_size),
      docs{"split the model over this many GPUs (sim: sim devices)",
          "tensor parallelism (`gpu/model/README.md`, \"Tensor parallelism\"): the model's "
          "shards on this many devices, rank 0 on the engine's thread and the others on "
          "threads of their own (`gpu/model/tp_peers`), every rank stepping each plan; each "
          "rank's memory plan and KV cache hold its share. cuda: GPUs "
          "`device.index`..`device.index`+N-1 with NCCL; sim: N sim devices sharing "
          "`device.sim.threads`. LoRA adapters, hybrids and the KV host and disk tiers "
          "split with the model. Refused for a model that does not split evenly (heads, KV "
          "heads, MLP, vocabulary, a hybrid's Mamba-2 heads, or groups that neither divide "
          "the ranks nor are divided by them)"}),
  };
}

// kv_events.endpoint .. kv_events.buffer_steps.
std::vector<key_spec> kv_events_keys() {
  return {
      string_key("kv_events.endpoint", COURIER_FIELD(kv_events.endpoint),
      docs{"ZeroMQ endpoint for KV-cache events (vLLM's); \"\": off",
          "bind a ZeroMQ PUB socket there and publish the prefix cache's events in vLLM's "
          "KV-event format (`actors/telemetry/kv_event_publisher.hpp`: topic, sequence "
          "number, msgpack `KVEventBatch` of `BlockStored` / `BlockRemoved` / "
          "`AllBlocksCleared`), for llm-d's, SGLang's or Dynamo's cache-aware routers; a "
          "bad endpoint stops the start naming this key; empty: off"}),
      string_key("kv_events.topic", COURIER_FIELD(kv_events.topic),
      docs{"first frame of every event message",
          "the topic frame of every message (vLLM's default is empty)"}),
      string_key("kv_events.replay_endpoint", COURIER_FIELD(kv_events.replay_endpoint),
      docs{"ZeroMQ ROUTER replaying missed batches (vLLM's); \"\": off",
          "bind a ZeroMQ ROUTER there that replays missed batches in vLLM's protocol "
          "(`[identity, \"\", start_seq]` answered with every kept batch from `start_seq` "
          "on, then the end marker); a bad endpoint stops the start naming this key; empty: "
          "off"}),
      integer_key("kv_events.buffer_steps", 0, 10000000, COURIER_FIELD(kv_events.buffer_steps),
      docs{"batches kept for replays",
          "batches kept for replays (vLLM's default)"}),
  };
}

// cluster.listen .. cluster.cache_threshold.
std::vector<key_spec> cluster_keys() {
  return {
      string_key("cluster.listen", COURIER_FIELD(cluster.listen),
      docs{"a replica: host:port to publish the scheduler on",
          "a replica: publish the scheduler on `host:port` through CAF's middleman (port 0: "
          "any free one, printed) for a front end; its scheduler then also answers "
          "`ready_atom` and streams its cache's events to watchers; empty: not a replica"}),
      custom_key(
          "cluster.replicas", false, "list of `host:port`",
          [](const YAML::Node& node, server_config& c) { c.cluster.replicas = read_addresses(node); },
          [](const server_config& c) { return show_list(c.cluster.replicas); },
          docs{"a front end: host:port of each replica to route to",
               "a front end: load no model weights (`model.path` still gives the tokenizer and "
               "chat template) and route every request to one of these replicas "
               "(`actors/cluster/README.md`); a replica that does not answer at start is "
               "retried; none answering stops the start naming this key"}),
      choice_key("cluster.routing", {"cache_aware", "least_loaded", "round_robin"},
                 COURIER_FIELD(cluster.routing),
      docs{"cache_aware | least_loaded | round_robin",
          "how the front end picks a replica (`cluster/README.md`)"}),
      integer_key("cluster.heartbeat_ms", 10, 600000, COURIER_FIELD(cluster.heartbeat_ms),
      docs{"replica health checks; 3 unanswered: down",
          "the front end asks each replica's stats this often; three unanswered: the "
          "replica is down"}),
      integer_key("cluster.balance_abs", 0, k_no_max, COURIER_FIELD(cluster.balance_abs),
      docs{"cache_aware: loads this close are balanced...",
          "cache_aware: loads (requests in flight) this close, or this close as a ratio, "
          "are balanced (SGLang's thresholds); otherwise the least loaded replica gets the "
          "request"}),
      number_key("cluster.balance_rel", 1.0, 1000.0, false, COURIER_FIELD(cluster.balance_rel),
      docs{"...or this close as a ratio",
          "cache_aware: loads (requests in flight) this close, or this close as a ratio, "
          "are balanced (SGLang's thresholds); otherwise the least loaded replica gets the "
          "request"}),
      number_key("cluster.cache_threshold", 0.0, 1.0, false,
                 COURIER_FIELD(cluster.cache_threshold),
      docs{"share of a prompt's blocks a replica must hold",
          "cache_aware: the share of a prompt's blocks a replica must hold to win it"}),
  };
}

// server.host .. server.grammar_compile_mb.
std::vector<key_spec> server_keys() {
  return {
      string_key("server.host", COURIER_FIELD(server.host),
      docs{"address to listen on",
          "the address to bind"}),
      integer_key("server.port", 0, 65535, COURIER_FIELD(server.port),
      docs{"0..65535; 0: any free port",
          "0: any free port"}),
      // Read by the builder's read_api_keys: entries have their own origin. Never shown: secrets.
      custom_key("server.api_keys", true, "map", nullptr,
                 [](const server_config&) { return std::string("{}"); },
                 docs{"API key -> tenant; empty: no authentication",
                      "non-empty string → non-empty string (key → tenant), or → `{tenant: T, "
                      "models: [names], admin: true}`: T may use only those models (the served "
                      "name, adapters' names; per tenant: two keys of one tenant may not list "
                      "different models), anything else is a 404 `model_not_found` and "
                      "`/v1/models` lists only those; `admin: true` lets T load and unload LoRA "
                      "adapters (`lora.runtime_loading`); empty or `~`: no auth"}),
      integer_key("server.max_waiting", 1, k_no_max, COURIER_FIELD(server.max_waiting),
      docs{"most requests waiting to be scheduled; more are refused",
          "waiting requests beyond which a submit gets 503"}),
      integer_key("server.max_body_bytes", 1, k_no_max, COURIER_FIELD(server.max_body_bytes),
      docs{"largest accepted request body (16 MiB)",
          "the largest request body (413 beyond)"}),
      integer_key("server.max_json_depth", 1, 10000, COURIER_FIELD(server.max_json_depth),
      docs{"deepest nesting of arrays/objects in a request body",
          "a request body nesting arrays/objects deeper is a 400 (checked before parsing)"}),
      integer_key("server.admission_nice", 0, 19, COURIER_FIELD(server.admission_nice),
      docs{"admission threads run this much nicer than generation",
          "admission's threads (CAF's pooled workers: token relays and responses; the text "
          "pool: parsing, templates, tokenizing) run this much nicer than the generation "
          "loop (scheduler, engine and sim threads), so a flood of large requests slows "
          "admission, not running streams; `0`: same priority"}),
      integer_key("server.admission_threads", 0, 256, COURIER_FIELD(server.admission_threads),
      docs{"threads parsing and tokenizing bodies; 0: cores / 4",
          "threads of the text pool, which parses, templates and tokenizes every request "
          "body; `0`: a quarter of the hardware threads, at least 1"}),
      integer_key("server.max_sequences_per_request", 1, k_no_max,
                  COURIER_FIELD(server.max_sequences_per_request),
      docs{"prompts x n in one request",
          "prompts × `n` of one request; more is a 400"}),
      integer_key("server.max_cached_grammars", 1, 100000,
                  COURIER_FIELD(server.max_cached_grammars),
      docs{"structured outputs: compiled grammars kept, by schema",
          "structured outputs: compiled grammars kept by what they were compiled from (the "
          "schema, regex, GBNF, choices), each with its mask cache (about vocab/8 bytes per "
          "grammar position met: 19 KB on a 151k vocabulary); the least recently used goes "
          "first"}),
      integer_key("server.grammar_cache_mb", 1, 1 << 20, COURIER_FIELD(server.grammar_cache_mb),
      docs{"the grammars' mask caches together (one: a quarter)",
          "what the mask caches of the kept grammars (`server.max_cached_grammars`) hold "
          "together: past it the least recently used grammars go (a running request keeps "
          "its own), and one grammar's cache alone holds at most a quarter of it, dropping "
          "its least recently used positions (a position met again is computed again: "
          "slower, the same mask)."}),
      integer_key("server.grammar_compile_ms", 1, 600000, COURIER_FIELD(server.grammar_compile_ms),
      docs{"one grammar's compile CPU time at most (else a 400)",
          "the CPU time one grammar's compilation may take (the compiling thread's, not "
          "wall time: a grammar waiting for the CPU on a loaded machine is not refused for "
          "the wait) (JSON Schema to GBNF, parsing, the DFAs); past it the request is a 400 "
          "naming this key. Grammars compile on admission's grammar lane, never on the "
          "threads that parse other requests"}),
      integer_key("server.grammar_compile_mb", 1, 1 << 20,
                  COURIER_FIELD(server.grammar_compile_mb),
      docs{"the compiler's memory for one grammar at most",
          "the compiler's own memory for one grammar (an estimate of what it holds: "
          "expressions, GBNF text, rules, NFA and DFA states); past it, a 400 naming this "
          "key"}),
  };
}

// server.grammar_compile_work .. server.actor_threads.
std::vector<key_spec> server_limit_keys() {
  return {
      integer_key("server.grammar_compile_work", 1, k_no_max,
                  COURIER_FIELD(server.grammar_compile_work),
      docs{"the compiler's steps for one grammar at most (2^28)",
          "the compiler's inner-loop steps for one grammar (2^28: about 0.2-0.5 s of one "
          "core); past it, a 400 naming this key. XGrammar's and llguidance's compilers are "
          "bounded the same way"}),
      integer_key("server.grammar_max_branches", 1, 1 << 20,
                  COURIER_FIELD(server.grammar_max_branches),
      docs{"parse stacks a grammar position may start, or decoding hold, at once",
          "the parse stacks one position of a compiled grammar may start at once (an "
          "alternation of that many objects, a repeat of a part that can match nothing): "
          "each costs a walk of the vocabulary when first reached while decoding, so more "
          "is refused at compile time (a 400 naming this key); a decoding position whose "
          "parse holds more (an ambiguous grammar, as its output grows) fails its request, "
          "naming this key"}),
      integer_key("server.max_stream_buffer_bytes", 0, k_no_max,
                  COURIER_FIELD(server.max_stream_buffer_bytes),
      docs{"a stream's unread bytes past which its client is dropped and its request "
          "cancelled (8 MiB); 0: unbounded",
          "a stream whose client does not read (or reads more slowly than tokens come) is "
          "disconnected once this many of its bytes are queued unwritten, which cancels its "
          "request (`actors/admission/http/README.md`); counted in "
          "`courier:stream_buffer_overflows_total`; 0: unbounded"}),
      integer_key("server.responses_store_mb", 0, 1 << 20,
                  COURIER_FIELD(server.responses_store_mb),
      docs{"/v1/responses kept for previous_response_id (the oldest go first); 0: none",
          "memory for the responses `/v1/responses` keeps (`store`, on unless a request "
          "says `store: false`, as OpenAI's): what `previous_response_id` continues, "
          "`item_reference` names and `GET`/`DELETE /v1/responses/{id}` read, each tenant "
          "its own; past it the oldest go first. `0`: nothing is kept (`store` echoes "
          "false; `previous_response_id` is a 400 naming this key)"}),
      integer_key("server.responses_store_s", 1, 30 * 24 * 3600,
                  COURIER_FIELD(server.responses_store_s),
      docs{"how long a kept response lasts (seconds)",
          "seconds a kept response lasts (`server.responses_store_mb`); after it, its id is "
          "unknown (a 404, or a 400 naming `previous_response_id`)"}),
      custom_key(
          "server.cors_allowed_origins", false, "list of strings",
          [](const YAML::Node& node, server_config& c) {
            c.server.cors_allowed_origins = read_origins(node);
          },
          [](const server_config& c) { return show_list(c.server.cors_allowed_origins); },
          docs{"browser origins that may call the API, or [\"*\"]; []: none",
               "exact browser origins (`https://app.example`, `http://localhost:3000`: scheme, "
               "host, optional port, no path) whose pages may call the API, or `[\"*\"]` for "
               "any; empty or `~`: no CORS headers (`actors/admission/README.md`)"}),
      integer_key("server.max_n", 1, 1024, COURIER_FIELD(server.max_n),
      docs{"most choices (n) one request may ask for",
          "the most choices (`n`) one request may ask for; more is a 400 naming this key"}),
      choice_key("server.web_ui", {"auto", "true", "false"}, COURIER_FIELD(server.web_ui),
      docs{"auto (loopback hosts only) | true | false: the web page at /",
          "`false`: serve the web page at `/` (chat playground, live dashboard: "
          "`actors/admission/README.md`); `auto`: only when `server.host` is a loopback "
          "address (`127.x.x.x`, `::1`, `localhost`), so a server listening on the network "
          "does not show it unless asked"}),
      integer_key("server.actor_threads", 1, 256, COURIER_FIELD(server.actor_threads),
      docs{"CAF's pooled worker threads (admission, telemetry)",
          "CAF's pooled worker threads: admission's actors (token relays, responses, "
          "scrapes), telemetry, a front end's router. The scheduler and the engine run on "
          "threads of their own, the sim's compute on `device.sim.threads`, parsing and "
          "tokenizing on `server.admission_threads`; 2 suits a 2-core machine "
          "(`docs/CAF017.md` P7)"}),
  };
}

// scheduler.max_num_seqs .. scheduler.cache_isolation.
std::vector<key_spec> scheduler_keys() {
  return {
      integer_key("scheduler.max_num_seqs", 1, k_no_max, COURIER_FIELD(scheduler.max_num_seqs),
      docs{"sequences running in one step",
          "sequences running at once"}),
      integer_key("scheduler.max_batched_tokens", 1, k_no_max,
                  COURIER_FIELD(scheduler.max_batched_tokens),
      docs{"tokens fed in one step (prefill chunks + decodes)",
          "tokens fed per step (decode rows, drafts and prefill chunks)"}),
      integer_key("scheduler.block_size", 1, 256, COURIER_FIELD(scheduler.block_size),
      docs{"tokens per KV block, 1..256",
          "tokens per KV block"}),
      custom_key(
          "scheduler.num_kv_blocks", false, "int or `auto`",
          [](const YAML::Node& node, server_config& c) {
            c.scheduler.num_kv_blocks = read_kv_blocks(node);
          },
          [](const server_config& c) {
            return c.scheduler.num_kv_blocks ? std::to_string(*c.scheduler.num_kv_blocks)
                                             : std::string("auto");
          },
          docs{"auto: from the memory budget; or a block count",
               "`auto` (from the memory budget) or `> 0`"}),
      bool_key("scheduler.prefix_caching", COURIER_FIELD(scheduler.prefix_caching),
      docs{"reuse KV blocks of shared prompt prefixes",
          "reuse the KV blocks of cached prompt prefixes"}),
      bool_key("scheduler.overlap", COURIER_FIELD(scheduler.overlap),
      docs{"plan step N+1 while step N runs",
          "plan step N+1 while step N runs (two steps in flight)"}),
      integer_key("scheduler.state_slots", 0, k_no_max, COURIER_FIELD(scheduler.state_slots),
      docs{"hybrid models: Mamba-2 state slots; 0: max_num_seqs",
          "hybrid models' Mamba-2 state slots (sequences running at once); 0: "
          "`max_num_seqs` within half the memory left"}),
      choice_key("scheduler.cache_isolation", {"auto", "none", "tenant"},
                 COURIER_FIELD(scheduler.cache_isolation),
      docs{"auto (tenant with api_keys, else none) | none | tenant",
          "`tenant`; `auto` is `tenant` when `server.api_keys` is set, else `none`; `none` "
          "with API keys is honoured with a warning at start (tenants then share "
          "prefix-cache blocks, and `cached_tokens` tells one tenant what another sent)"}),
  };
}

// cache.host_tier_mb .. cache.disk_tier_read_timeout_ms.
std::vector<key_spec> cache_keys() {
  return {
      integer_key("cache.host_tier_mb", 0, k_no_max, COURIER_FIELD(cache.host_tier_mb),
      docs{"host memory for KV blocks (evicted prefixes, swaps); 0: off",
          "host memory (pinned on CUDA) for KV blocks: blocks the prefix cache evicts from "
          "the device are kept there and copied back for a later prompt that shares them, "
          "and a preempted sequence's computed blocks are swapped out there and back in "
          "when it resumes; 0: none. Hybrid models need `cache.ssm_host_tier_mb` beside it "
          "(their state goes with their KV: a swap's, and evicted snapshots', kept by their "
          "prefix so a host tier hit resumes with its state)"}),
      bool_key("cache.host_tier_write_through", COURIER_FIELD(cache.host_tier_write_through),
      docs{"copy stored blocks to it beside the steps, not at eviction",
          "with a host tier and prefix caching: each block the prefix cache stores is "
          "copied to the host tier on the device's copy stream, beside the steps, so "
          "evicting it later copies nothing in a step's stream order (SGLang HiCache's "
          "write-through); `false`: copied out when evicted (write-back: PCIe traffic only "
          "for what is evicted)"}),
      choice_key("cache.preemption", {"auto", "swap", "recompute"},
                 COURIER_FIELD(cache.preemption),
      docs{"auto (cheaper of swap and recompute) | swap | recompute",
          "`auto` (swap when the copies out and back are estimated cheaper than "
          "recomputing, and the host tier has room), `swap`, `recompute`; a hybrid swaps "
          "only with a host state row for its Mamba-2 state (`cache.ssm_host_tier_mb`) and "
          "no row of it in flight, and counts copying that state in the cost"}),
      integer_key("cache.ssm_snapshots", 0, k_no_max, COURIER_FIELD(cache.ssm_snapshots),
      docs{"snapshot rows on the device; 0: auto",
          "hybrid models' state snapshot rows (their prefix cache); 0: twice the state "
          "slots within a quarter of the memory left; none when `scheduler.prefix_caching` "
          "is off"}),
      integer_key("cache.ssm_checkpoint_tokens", 0, k_no_max,
                  COURIER_FIELD(cache.ssm_checkpoint_tokens),
      docs{"a snapshot every this many prompt tokens; 0: none",
          "an intermediate snapshot every this many prompt tokens, rounded down to whole "
          "blocks (at least one); 0: none"}),
      bool_key("cache.ssm_decode_snapshots", COURIER_FIELD(cache.ssm_decode_snapshots),
      docs{"snapshots at decode-time block boundaries (next turns)",
          "tail snapshots at decode-time block boundaries, for a conversation's next turn"}),
      integer_key("cache.ssm_host_tier_mb", 0, k_no_max, COURIER_FIELD(cache.ssm_host_tier_mb),
      docs{"host memory for evicted snapshots worth keeping; 0: off",
          "host memory for snapshots evicted from the device that are worth copying back "
          "(with `cache.host_tier_mb`, their prefixes' blocks may leave the device too), "
          "and for swapped-out sequences' states (which come first); 0: none"}),
      string_key("cache.disk_tier_path", COURIER_FIELD(cache.disk_tier_path),
      docs{"a folder for the KV disk tier (behind the host tier)",
          "a folder (created if missing) for the KV disk tier's file, `courier-kv.blocks`; "
          "one server per file (locked)"}),
      number_key("cache.disk_tier_gb", 0.0, 1e6, false, COURIER_FIELD(cache.disk_tier_gb),
      docs{"its size; 0: off (needs host_tier_mb)",
          "the disk tier's size, reserved at start (a full disk is an error naming "
          "`cache.disk_tier_path`); 0: none. Needs `cache.disk_tier_path` and "
          "`cache.host_tier_mb` (blocks go to disk from host memory and come back through "
          "it)"}),
      bool_key("cache.disk_tier_persist", COURIER_FIELD(cache.disk_tier_persist),
      docs{"keep its blocks across restarts (checked before reuse)",
          "keep the disk tier's blocks across restarts: at start each kept block's header "
          "is checked against the model's, tokenizer's and KV layout's fingerprint (others "
          "dropped, with a warning), and each block's checksum when it is read; false: the "
          "file starts empty and is removed at exit"}),
      integer_key("cache.disk_tier_io_threads", 1, 64, COURIER_FIELD(cache.disk_tier_io_threads),
      docs{"disk reads and writes at once",
          "disk reads and writes at once"}),
      integer_key("cache.disk_tier_read_timeout_ms", 1, k_no_max,
                  COURIER_FIELD(cache.disk_tier_read_timeout_ms),
      docs{"longest wait for a request's disk reads",
          "the longest a request waits for its blocks' disk reads before it queues without "
          "those still being read"}),
  };
}

// speculative.prompt_lookup.enabled .. speculative.shared_cache_scopes.
std::vector<key_spec> speculative_keys() {
  return {
      bool_key("speculative.prompt_lookup.enabled",
               COURIER_FIELD(speculative.prompt_lookup.enabled),
      docs{"draft tokens by n-gram lookup in the prompt",
          "prompt-lookup speculative decoding; a hybrid also gets draft state rows: "
          "`num_draft x max_num_seqs`, within an eighth of the memory left"}),
      integer_key("speculative.prompt_lookup.num_draft", 1, 16,
                  COURIER_FIELD(speculative.prompt_lookup.num_draft),
      docs{"drafts proposed per step, 1..16",
          "the most draft tokens a row"}),
      integer_key("speculative.prompt_lookup.min_ngram", 1, k_no_max,
                  COURIER_FIELD(speculative.prompt_lookup.min_ngram),
      docs{"shortest n-gram matched",
          "the shortest suffix n-gram searched"}),
      integer_key("speculative.prompt_lookup.max_ngram", 1, k_no_max,
                  COURIER_FIELD(speculative.prompt_lookup.max_ngram),
      docs{"longest n-gram matched, >= min_ngram",
          "and `>= min_ngram`; the longest suffix n-gram searched"}),
      integer_key("speculative.shared_cache_mb", 0, k_no_max,
                  COURIER_FIELD(speculative.shared_cache_mb),
      docs{"earlier requests' tokens kept for lookup; 0: off",
          "host memory for finished requests' tokens, to draft for later requests of the "
          "same scope (weights, tokenizer, adapter, tenant: `actors/scheduler/README.md`); "
          "0: no shared lookup cache"}),
      integer_key("speculative.shared_cache_scopes", 1, k_no_max,
                  COURIER_FIELD(speculative.shared_cache_scopes),
      docs{"most scopes (model, tokenizer, adapter, tenant) kept",
          "scopes kept at once, each with an equal share of `shared_cache_mb`; a share too "
          "small for one request of 1024 tokens (about 52 KB) stops the start naming both "
          "keys"}),
  };
}

// lora.adapters .. lora.load_timeout_s.
std::vector<key_spec> lora_keys() {
  return {
      // Read by the builder's read_adapters: entries are names.
      custom_key("lora.adapters", true, "map", nullptr,
                 [](const server_config& c) {
                   std::string out;
                   for (const auto& [name, dir] : c.lora.adapters) {
                     out += (out.empty() ? "{" : ", ") + show_string(name) + ": " +
                            show_string(dir);
                   }
                   return out.empty() ? std::string("{}") : out + "}";
                 },
                 docs{"name -> PEFT adapter folder; a request's model names one",
                      "adapter name → PEFT folder (`adapter_config.json` + "
                      "`adapter_model.safetensors`), loaded and checked against the model at "
                      "start (a bad one stops the server, naming the file and tensor or field); "
                      "a request whose `model` is a name runs with that adapter; a name may not "
                      "be the base model's"}),
      integer_key("lora.max_loras", 1, 1024, COURIER_FIELD(lora.max_loras),
      docs{"adapters on the device at once (slots); others wait",
          "adapters on the device at once (capped by how many there are): a request whose "
          "adapter has no slot waits for one, least recently used first, and those behind "
          "it that need no new slot go ahead (`actors/scheduler/README.md`)"}),
      integer_key("lora.max_rank", 1, 1024, COURIER_FIELD(lora.max_rank),
      docs{"the largest adapter rank (the slots' size)",
          "the largest rank `r` an adapter may have: every slot is this size"}),
      integer_key("lora.max_cpu_loras", 0, k_no_max, COURIER_FIELD(lora.max_cpu_loras),
      docs{"adapters kept in host memory (others re-read); 0: all",
          "adapters kept in host memory (f32 copies, what a slot is loaded from); 0: all. "
          "Beyond it the least recently used copies go (every adapter is still read and "
          "checked at start) and a request for one is read again from its folder while it "
          "waits (others go on). vLLM's `--max-cpu-loras`"}),
      bool_key("lora.runtime_loading", COURIER_FIELD(lora.runtime_loading),
      docs{"POST /v1/load_lora_adapter, /v1/unload_lora_adapter",
          "serve `POST /v1/load_lora_adapter` `{\"lora_name\", \"lora_path\"}` and "
          "`/v1/unload_lora_adapter` `{\"lora_name\"}` (vLLM's); the slot pool is then "
          "`lora.max_loras` slots even with no adapters at start; with `server.api_keys`, "
          "only keys of an `admin: true` entry may call them (403 otherwise)"}),
      integer_key("lora.load_timeout_s", 1, 86400, COURIER_FIELD(lora.load_timeout_s),
      docs{"a folder read not done by then fails (answered 504)",
          "a read of an adapter's folder (a run-time load, or a host copy read again) not "
          "finished by then is answered as failed (504 for a load; the requests waiting for "
          "a copy fail) and the read is left to end on its own: neither a request nor "
          "shutdown waits on a hung file system. Only regular files of bounded size are "
          "read (a FIFO or a device is refused at once)"}),
  };
}

// telemetry.metrics .. telemetry.trace.buffer_spans.
std::vector<key_spec> telemetry_keys() {
  return {
      bool_key("telemetry.metrics", COURIER_FIELD(telemetry.metrics),
      docs{"serve Prometheus metrics at /metrics",
          "Prometheus metrics at `/metrics`"}),
      string_key("telemetry.trace.path", COURIER_FIELD(telemetry.trace.path),
      docs{"actor-trace output file; empty: tracing off",
          "the actor-trace file; empty: tracing off"}),
      number_key("telemetry.trace.sample", 0.0, 1.0, false, COURIER_FIELD(telemetry.trace.sample),
      docs{"share of requests traced, in [0, 1]",
          "the share of request ids whose spans are kept"}),
      integer_key("telemetry.trace.flush_ms", 1, 60000, COURIER_FIELD(telemetry.trace.flush_ms),
      docs{"buffered spans are written this often",
          "the telemetry actor writes the buffered spans to the trace file this often"}),
      integer_key("telemetry.trace.buffer_spans", 1024, std::int64_t{1} << 30,
                  COURIER_FIELD(telemetry.trace.buffer_spans),
      docs{"most spans buffered between writes (past it: dropped)",
          "spans buffered between writes at most (about 100 bytes each); past it spans are "
          "dropped and counted (`courier-trace` reports the count)"}),
  };
}

}  // namespace

const std::vector<key_spec>& schema() {
  static const std::vector<key_spec> keys = [] {
    std::vector<key_spec> all;
    for (auto part : {model_keys, device_keys, engine_keys, parallel_keys, kv_events_keys,
                      cluster_keys, server_keys, server_limit_keys, scheduler_keys, cache_keys,
                      speculative_keys, lora_keys, telemetry_keys}) {
      for (key_spec& k : part()) all.push_back(std::move(k));
    }
    return all;
  }();
  return keys;
}

#undef COURIER_FIELD

}  // namespace courier::config
