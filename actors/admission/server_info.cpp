#include "actors/admission/server_info.hpp"

#include <nlohmann/json.hpp>

#include "actors/admission/admission_context.hpp"

namespace courier::admission {

namespace {

using info_json = nlohmann::ordered_json;  // fields in the order written here

const char* tool_parser_name(const admission_context& ctx) {
  if (!ctx.read_tool_calls) return "none";
  switch (ctx.tool_family) {
    case text::parsers::tool_family::hermes: return "hermes";
    case text::parsers::tool_family::llama3_json: return "llama3_json";
    case text::parsers::tool_family::mistral: return "mistral";
  }
  return "none";
}

const char* reasoning_parser_name(const admission_context& ctx) {
  if (!ctx.read_reasoning) return "none";
  return ctx.reasoning_from_start ? "deepseek_r1" : "qwen3";
}

info_json kv_cache(const config::server_config& cfg, const msg::engine_ready& ready) {
  const config::cache_section& c = cfg.cache;
  return {{"block_size", ready.block_size},
          {"num_blocks", ready.num_kv_blocks},
          {"capacity_tokens", std::int64_t{ready.num_kv_blocks} * ready.block_size},
          {"block_bytes", ready.kv_block_bytes},
          {"prefix_caching", cfg.scheduler.prefix_caching},
          {"cache_isolation", config::cache_isolation_of(cfg)},
          {"preemption", c.preemption},
          {"host_tier_blocks", ready.host_kv_blocks},
          {"host_tier_mb", c.host_tier_mb},
          {"host_tier_write_through", c.host_tier_write_through},
          {"disk_tier", !c.disk_tier_path.empty() && c.disk_tier_gb > 0},
          {"disk_tier_gb", c.disk_tier_gb},
          {"disk_tier_persist", c.disk_tier_persist}};
}

}  // namespace

std::string server_info_json(const admission_context& ctx, const config::server_config& cfg,
                             const msg::engine_ready& ready) {
  info_json info;
  info["model"] = {{"name", ctx.model_name},
                   {"max_model_len", ctx.max_model_len},
                   {"vocab_size", ctx.vocab_size},
                   {"recurrent", ready.recurrent},
                   {"tokenizer", ctx.tok != nullptr},
                   {"chat_template", ctx.chat != nullptr},
                   {"tool_parser", tool_parser_name(ctx)},
                   {"reasoning_parser", reasoning_parser_name(ctx)}};
  info["device"] = {{"name", ready.device_name},
                    {"backend", cfg.device.backend},
                    {"tensor_parallel", cfg.parallel.tensor_size},
                    {"memory_fraction", cfg.device.memory_fraction}};
  info["kv_cache"] = kv_cache(cfg, ready);
  info["scheduler"] = {{"max_num_seqs", cfg.scheduler.max_num_seqs},
                       {"max_batched_tokens", cfg.scheduler.max_batched_tokens},
                       {"max_waiting", cfg.server.max_waiting},
                       {"overlap", cfg.scheduler.overlap}};
  info["engine"] = {{"pipeline", cfg.engine.pipeline},
                    {"graph_max_batch", cfg.engine.graph_max_batch},
                    {"gemm_autotune", cfg.engine.gemm_autotune}};
  const config::prompt_lookup_section& p = cfg.speculative.prompt_lookup;
  info["speculative"] = {{"prompt_lookup", p.enabled},
                         {"num_draft", p.num_draft},
                         {"min_ngram", p.min_ngram},
                         {"max_ngram", p.max_ngram},
                         {"shared_cache_mb", cfg.speculative.shared_cache_mb},
                         {"shared_cache_scopes", cfg.speculative.shared_cache_scopes}};
  info["lora"] = {{"slots", ready.lora_slots},
                  {"max_rank", cfg.lora.max_rank},
                  {"runtime_loading", cfg.lora.runtime_loading}};
  if (ready.recurrent) {
    info["recurrent_state"] = {{"state_slots", ready.state_slots},
                               {"snapshot_slots", ready.snapshot_slots},
                               {"host_snapshot_slots", ready.host_snapshot_slots},
                               {"checkpoint_tokens", cfg.cache.ssm_checkpoint_tokens},
                               {"decode_snapshots", cfg.cache.ssm_decode_snapshots}};
  }
  if (ctx.front_end) {
    info["cluster"] = {{"replicas", cfg.cluster.replicas.size()},
                       {"routing", cfg.cluster.routing}};
  }
  info["server"] = {{"max_n", cfg.server.max_n},
                    {"max_sequences_per_request", cfg.server.max_sequences_per_request},
                    {"max_body_bytes", cfg.server.max_body_bytes},
                    {"auth", !cfg.server.api_keys.empty()},
                    {"responses_store_mb", cfg.server.responses_store_mb},
                    {"web_ui", ctx.web_ui}};
  return info.dump();
}

}  // namespace courier::admission
