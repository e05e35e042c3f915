#pragma once
// What every request actor of one server shares, read-only once the server runs: the model's
// name and limits, its tokenizer and chat template (either may be absent), the API keys, and the
// scheduler. What changes while it serves locks itself: the adapter list (swapped atomically),
// the request counters (atomics), the grammar registry and the response store.
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "actors/admission/grammar_registry.hpp"
#include "actors/admission/response_store.hpp"
#include "actors/admission/sentence_pooling.hpp"
#include "actors/config/config.hpp"
#include "text/output_parsers/tool_call_parser.hpp"
#include "actors/scheduler/scheduler_handle.hpp"
#include "actors/telemetry/telemetry_handle.hpp"
#include "text/jinja/chat_template.hpp"
#include "text/tokenizer/tokenizer.hpp"

namespace courier::admission {

struct admission_context {
  std::string model_name;
  // The LoRA adapters a request may name as its model: changed at run time (POST
  // /v1/load_lora_adapter) while text threads read it, so swapped whole, atomically.
  std::vector<std::string> adapters() const {
    return *std::atomic_load(&adapter_list_);
  }
  bool has_adapter(const std::string& name) const {
    const auto list = std::atomic_load(&adapter_list_);
    return std::find(list->begin(), list->end(), name) != list->end();
  }
  void set_adapters(std::vector<std::string> names) {
    std::atomic_store(&adapter_list_,
                      std::shared_ptr<const std::vector<std::string>>(
                          std::make_shared<std::vector<std::string>>(std::move(names))));
  }
  bool lora_runtime_loading = false;  // lora.runtime_loading: the two endpoints are served
  // A front end (cluster.replicas): `scheduler` is the router, and /metrics adds the replicas'
  // metrics (each sample labelled replica="host:port") to the front end's own.
  bool front_end = false;
  std::set<std::string> admin_tenants;  // may call them (when API keys are configured)
  std::int64_t max_model_len = 0;
  std::int32_t vocab_size = 0;
  std::int32_t hidden_size = 0;  // an embedding's length
  // What the model folder's sentence-transformers modules say: whether /v1/embeddings answers.
  sentence_pooling pooling;
  std::int32_t max_n = 16;                             // most choices per request (n)
  bool web_ui = false;  // the web page at `/` is served (server.web_ui, resolved)
  std::string server_info;  // GET /server_info's JSON (server_info.hpp), built at start
  std::int64_t max_sequences_per_request = 64;         // prompts x n in one request
  std::int32_t max_json_depth = 64;                    // deepest nesting of a request body
  // tok->max_text_bytes_per_id(): lets a prompt be refused as too long from its length in
  // bytes, before it is tokenized. 0: no bound.
  std::size_t max_text_bytes_per_id = 0;
  std::shared_ptr<const text::tokenizer> tok;          // null: token ids only
  std::shared_ptr<const text::jinja::chat_template> chat;  // null: no chat endpoint
  std::string bos_token, eos_token;                    // for the template
  std::vector<msg::token_id> eos_token_ids;            // the model's (generation_config)
  std::string chat_template_source;                    // empty: none
  // How chat output is read (model.tool_parser, model.reasoning_parser, resolved against the
  // chat template): the syntax tool calls are read and forced in, whether calls are read when
  // tool_choice is auto, and whether <think>...</think> is reasoning.
  text::parsers::tool_family tool_family = text::parsers::tool_family::hermes;
  bool read_tool_calls = true;
  bool read_reasoning = false;
  bool reasoning_from_start = false;  // deepseek_r1: the output starts inside <think> always
  // Structured outputs (response_format, guided_*, tool_choice): compiled grammars by spec.
  // Null without a tokenizer (a grammar is over text).
  std::shared_ptr<grammar_registry> grammars;
  // /v1/responses kept (server.responses_store_mb); null: none are.
  std::shared_ptr<response_store> responses;
  // scheduler.cache_isolation resolved to tenant: compiled grammars are scoped by tenant too.
  bool isolate_grammars = false;
  std::map<std::string, std::string> api_keys;         // key -> tenant; empty: no auth
  // Tenants restricted to some models (server.tenant_models): names sorted.
  std::map<std::string, std::vector<std::string>> tenant_models;
  actors::scheduler_actor scheduler;
  actors::telemetry_actor telemetry;                   // null: no /metrics
  std::atomic<std::uint64_t> next_request_id{1};
  std::atomic<std::int64_t> requests_in_flight{0};

 private:
  std::shared_ptr<const std::vector<std::string>> adapter_list_ =
      std::make_shared<std::vector<std::string>>();
};

// Whether `tenant` may use `model` (the served name or an adapter's): yes unless its API key
// entry lists the models it may use and this is not one.
inline bool may_use(const admission_context& ctx, const std::string& tenant,
                    const std::string& model) {
  const auto it = ctx.tenant_models.find(tenant);
  return it == ctx.tenant_models.end() ||
         std::binary_search(it->second.begin(), it->second.end(), model);
}

// The grammar registry's scope of `tenant`'s requests (grammar_registry::get).
inline std::string grammar_scope(const admission_context& ctx, const std::string& tenant) {
  return ctx.isolate_grammars ? tenant : std::string();
}

// Sets what the engine reported (model name, limits, EOS ids) and what the server config decides
// (API keys, request limits), loads the model folder's tokenizer and chat template, and makes
// the grammar registry; warns when tenants share caches although keys are configured. A context
// whose tokenizer is already set keeps its text assets (tok, chat, bos/eos strings, template
// source) as they are: a process that serves several contexts over one folder loads it once.
// Whether server.web_ui serves the page: true or false as set; auto on a loopback host only.
bool web_ui_on(const config::server_section& s);

void configure_context(admission_context& ctx, const config::server_config& cfg,
                       const msg::engine_ready& ready);

// server.grammar_compile_* and server.grammar_max_branches as the grammar compiler's limits.
grammar::compile_limits compile_limits_of(const config::server_section& s);

}  // namespace courier::admission
