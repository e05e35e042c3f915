#pragma once
// OpenAI request bodies (/v1/completions, /v1/chat/completions), parsed and validated into what
// the request actor needs. Every problem is an api_error with the HTTP status and the field.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "actors/admission/admission_context.hpp"
#include "actors/admission/api_error.hpp"
#include "actors/admission/structured_outputs.hpp"
#include "actors/admission/tool_calls.hpp"
#include "messages/messages.hpp"

namespace courier::admission {

enum class endpoint { completions, chat };

// A grammar the request needs and that is not compiled yet (compile_request_grammar): what to
// compile, and the trigger a tool call's grammar waits for (msg::output_grammar's).
struct pending_grammar {
  structured_output out;
  std::string trigger;
  bool trigger_repeats = true;
};

struct api_request {
  endpoint kind = endpoint::completions;
  std::string model;
  std::string adapter;  // the LoRA adapter `model` names; empty: the base model
  std::vector<std::vector<msg::token_id>> prompts;  // completions: one per prompt; chat: one
  std::int32_t n = 1;
  std::int32_t max_tokens = 16;          // 0 only with echo (no generation)
  bool stream = false;
  bool include_usage = false;            // stream_options.include_usage
  bool echo = false;                     // completions: the prompt text before the completion
  // Chat with echo (vLLM's): the final message's text when it is the assistant's, which each
  // choice's content then starts with.
  std::string echo_text;
  std::int32_t logprobs = -1;            // -1: none; else top-N alternatives per token
  msg::sampling_params sampling;         // seed per choice is derived in the request actor
  // Set by parse_request_fields when the output is held to a grammar; compile_request_grammar
  // compiles it into sampling.grammar and clears it.
  std::optional<pending_grammar> grammar_to_compile;
  std::vector<std::string> stop;         // stop strings
  bool include_stop_str_in_output = false;  // vLLM's: the output ends with the stop it matched
  std::vector<msg::token_id> stop_token_ids;
  bool ignore_eos = false;
  bool skip_special_tokens = true;
  bool return_token_ids = false;         // add token_ids to each choice (always without tokenizer)
  // Chat: the tools offered and tool_choice; how the output is read (reasoning, tool calls).
  tool_request tools;
  std::optional<text::parsers::tool_family> read_tool_calls;  // set: parse calls in this syntax
  bool read_reasoning = false;
  bool starts_in_reasoning = false;      // the rendered prompt ends inside <think>
  // Top-level fields the body carried that courier does not act on (ignored, as vLLM and
  // llama.cpp do; the request actor counts them in a metric). Fields set to null are "not
  // given" and are not listed.
  std::vector<std::string> ignored_fields;
};

// Most logit_bias entries one request may carry (OpenAI documents 300).
inline constexpr std::size_t max_logit_bias_entries = msg::max_logit_bias;

// Parses and validates a body; tokenizes (and for chat renders the template). Throws api_error.
// Optional fields set to null count as not given. The body's nesting depth is bounded first
// (ctx.max_json_depth, see json_body.hpp).
// `tenant`: whose request it is (grammar_scope: which compiled grammars it may find). Both steps
// below, one after the other.
api_request parse_api_request(endpoint kind, const std::string& body,
                              const admission_context& ctx, const std::string& tenant = {});

// Completions' `prompt` (and embeddings' `input`) as token ids: a string, a list of strings,
// token ids, or lists of token ids; text is tokenized with the tokenizer's special tokens. At
// most `max_prompts` (`limit` names the bound), none empty, none surely longer than
// max_model_len. Throws api_error 400 naming `field`.
std::vector<std::vector<msg::token_id>> parse_prompts(const nlohmann::json& p, const char* field,
                                                      const admission_context& ctx,
                                                      std::size_t max_prompts,
                                                      const char* limit);

// A 404 (model_not_found) unless `model` is the served model or one of its LoRA adapters.
void require_served_model(const std::string& model, const admission_context& ctx);
// A 404 (model_not_found) unless `tenant`'s API key may use `model` (may_use).
void require_tenant_model(const std::string& model, const admission_context& ctx,
                          const std::string& tenant);

// The first step: everything but compiling a grammar (which may take up to the grammar limits'
// time: the caller runs the second step on a lane of its own, so that a slow grammar never
// holds up other requests' parsing and tokenizing). Throws api_error.
api_request parse_request_fields(endpoint kind, const std::string& body,
                                 const admission_context& ctx);
// The second: compiles r.grammar_to_compile, if any, into r.sampling.grammar (in `tenant`'s
// grammar_scope). Throws api_error (400 naming the field, or the limit it went past).
void compile_request_grammar(api_request& r, const admission_context& ctx,
                             const std::string& tenant);

}  // namespace courier::admission
