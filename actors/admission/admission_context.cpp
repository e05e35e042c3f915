#include "actors/admission/admission_context.hpp"

#include <algorithm>
#include <cstdio>

#include "actors/admission/admission_server.hpp"
#include "actors/admission/grammar_vocabulary.hpp"
#include "actors/admission/server_info.hpp"

namespace courier::admission {

namespace {

bool mentions(const std::string& source, const char* what) {
  return source.find(what) != std::string::npos;
}

// model.tool_parser and model.reasoning_parser; auto looks at what the chat template writes.
void choose_output_parsers(admission_context& ctx, const config::model_section& m) {
  const std::string& t = ctx.chat_template_source;
  std::string tools = m.tool_parser;
  if (tools == "auto") {
    tools = mentions(t, "[TOOL_CALLS]")     ? "mistral"
            : mentions(t, "<|python_tag|>") ? "llama3_json"
                                            : "hermes";  // <tool_call>, or the common default
  }
  ctx.read_tool_calls = tools != "none";
  if (auto f = text::parsers::tool_family_from_name(tools)) ctx.tool_family = *f;
  ctx.read_reasoning = m.reasoning_parser == "auto" ? mentions(t, "<think>")
                                                     : m.reasoning_parser != "none";
  ctx.reasoning_from_start = m.reasoning_parser == "deepseek_r1";
}

}  // namespace

bool web_ui_on(const config::server_section& s) {
  if (s.web_ui != "auto") return s.web_ui == "true";
  return s.host == "localhost" || s.host == "::1" || s.host == "[::1]" ||
         s.host.rfind("127.", 0) == 0;
}

grammar::compile_limits compile_limits_of(const config::server_section& s) {
  grammar::compile_limits l;
  l.max_time_ms = static_cast<std::uint64_t>(s.grammar_compile_ms);
  l.max_memory_bytes = static_cast<std::uint64_t>(s.grammar_compile_mb) << 20;
  l.max_work = static_cast<std::uint64_t>(s.grammar_compile_work);
  l.max_branches = static_cast<std::uint64_t>(s.grammar_max_branches);
  return l;
}

void configure_context(admission_context& ctx, const config::server_config& cfg,
                       const msg::engine_ready& ready) {
  ctx.model_name = ready.model_name;
  ctx.set_adapters(ready.lora_adapters);
  ctx.lora_runtime_loading = cfg.lora.runtime_loading;
  ctx.front_end = !cfg.cluster.replicas.empty();
  ctx.admin_tenants = cfg.server.admin_tenants;
  ctx.max_model_len = ready.max_model_len;
  ctx.vocab_size = ready.vocab_size;
  ctx.hidden_size = ready.hidden_size;
  ctx.pooling = read_sentence_pooling(cfg.model.path);
  ctx.eos_token_ids = ready.eos_token_ids;
  ctx.api_keys = cfg.server.api_keys;
  ctx.tenant_models = cfg.server.tenant_models;
  for (const auto& [tenant, models] : ctx.tenant_models) {
    for (const std::string& m : models) {
      if (m != ctx.model_name && !ctx.has_adapter(m)) {
        throw config::config_error("server.api_keys: tenant '" + tenant + "' may use model '" +
                                   m + "', which is neither the served model ('" +
                                   ctx.model_name + "') nor a LoRA adapter (lora.adapters)");
      }
    }
  }
  ctx.max_json_depth = cfg.server.max_json_depth;
  ctx.max_sequences_per_request = cfg.server.max_sequences_per_request;
  ctx.max_n = cfg.server.max_n;
  if (cfg.server.responses_store_mb > 0) {
    ctx.responses = std::make_shared<response_store>(
        static_cast<std::size_t>(cfg.server.responses_store_mb) << 20,
        std::int64_t{cfg.server.responses_store_s} * 1000);
  }
  ctx.web_ui = web_ui_on(cfg.server);
  if (!ctx.tok) load_text_assets(cfg.model.path, ctx);  // else the caller loaded them (tests)
  choose_output_parsers(ctx, cfg.model);
  ctx.isolate_grammars = config::cache_isolation_of(cfg) == "tenant";
  if (ctx.tok) {
    ctx.max_text_bytes_per_id = ctx.tok->max_text_bytes_per_id();
    ctx.grammars = std::make_shared<grammar_registry>(
        grammar_vocabulary(*ctx.tok, ctx.eos_token_ids), cfg.server.max_cached_grammars,
        compile_limits_of(cfg.server), static_cast<std::size_t>(cfg.server.grammar_cache_mb) << 20);
  }
  if (!cfg.server.api_keys.empty() && cfg.scheduler.cache_isolation == "none") {
    std::fprintf(stderr,
                 "courier: warning: scheduler.cache_isolation is none with server.api_keys set: "
                 "tenants share prefix-cache blocks, and a response's cached_tokens can tell "
                 "one tenant what another sent\n");
  }
  ctx.server_info = server_info_json(ctx, cfg, ready);
}

}  // namespace courier::admission
