#pragma once
// One `courier generate` request from JSON with OpenAI field names: id, prompt_ids, max_tokens,
// temperature, top_p, top_k, min_p, seed, stop_token_ids, repetition_penalty, presence_penalty,
// frequency_penalty, ignore_eos, logprobs. An unknown field or a wrong type is a usage error
// naming the field.
#include <nlohmann/json.hpp>
#include <string>

#include "messages/messages.hpp"

namespace courier::cli {

struct generate_line {
  std::string id;
  msg::submit request;  // reply_to unset
};

// `where` prefixes errors (e.g. "prompts.jsonl:3").
generate_line parse_generate_line(const nlohmann::json& j, const std::string& where);

// The output line: {"id", "token_ids", "finish_reason"[, "logprobs"][, "error"]}.
nlohmann::json generate_output(const std::string& id, const std::vector<msg::token_id>& tokens,
                               const std::vector<msg::token_logprob>& logprobs,
                               const msg::token_event& last, bool with_logprobs);

}  // namespace courier::cli
