#pragma once
// One `courier generate` request from JSON with OpenAI field names: id, prompt_ids, max_tokens,
// temperature, top_p, top_k, min_p, seed, stop_token_ids, repetition_penalty, presence_penalty,
// frequency_penalty, ignore_eos, min_tokens (vLLM's), logprobs. An unknown field or a wrong type
// is a usage error naming the field.
#include <nlohmann/json.hpp>
#include <string>

#include "messages/messages.hpp"
#include "text/tokenizer/tokenizer.hpp"

namespace courier::cli {

struct generate_line {
  std::string id;
  msg::submit request;  // reply_to unset
};

// `where` prefixes errors (e.g. "prompts.jsonl:3"). A text "prompt" needs `tok` (may be null).
generate_line parse_generate_line(const nlohmann::json& j, const std::string& where,
                                  const text::tokenizer* tok);

// The output line: {"id", "token_ids", "finish_reason"[, "text"][, "logprobs"][, "error"]};
// "text" when the model has a tokenizer (`tok` not null).
nlohmann::json generate_output(const std::string& id, const std::vector<msg::token_id>& tokens,
                               const std::vector<msg::token_logprob>& logprobs,
                               const msg::token_event& last, bool with_logprobs,
                               const text::tokenizer* tok);

}  // namespace courier::cli
