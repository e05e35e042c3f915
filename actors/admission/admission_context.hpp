#pragma once
// What every request actor of one server shares, read-only once the server runs: the model's
// name and limits, its tokenizer and chat template (either may be absent), the API keys, and the
// scheduler. The request-id counter is the one mutable member (atomic).
#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "actors/admission/grammar_registry.hpp"
#include "actors/config/config.hpp"
#include "text/output_parsers/tool_call_parser.hpp"
#include "actors/scheduler/scheduler_handle.hpp"
#include "actors/telemetry/telemetry_handle.hpp"
#include "text/jinja/chat_template.hpp"
#include "text/tokenizer/tokenizer.hpp"

namespace courier::admission {

struct admission_context {
  std::string model_name;
  std::vector<std::string> adapters;  // LoRA adapters a request may name as its model
  std::int64_t max_model_len = 0;
  std::int32_t vocab_size = 0;
  std::int32_t max_n = 16;                             // most choices per request (n)
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
  std::map<std::string, std::string> api_keys;         // key -> tenant; empty: no auth
  actors::scheduler_actor scheduler;
  actors::telemetry_actor telemetry;                   // null: no /metrics
  std::atomic<std::uint64_t> next_request_id{1};
  std::atomic<std::int64_t> requests_in_flight{0};
};

// Sets what the engine reported (model name, limits, EOS ids) and what the server config decides
// (API keys, request limits), loads the model folder's tokenizer and chat template, and makes
// the grammar registry; warns when tenants share caches although keys are configured. A context
// whose tokenizer is already set keeps its text assets (tok, chat, bos/eos strings, template
// source) as they are: a process that serves several contexts over one folder loads it once.
void configure_context(admission_context& ctx, const config::server_config& cfg,
                       const msg::engine_ready& ready);

}  // namespace courier::admission
