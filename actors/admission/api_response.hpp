#pragma once
// The JSON OpenAI clients expect: whole responses, stream chunks, usage, logprobs.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "actors/admission/api_request.hpp"
#include "actors/admission/chat_output.hpp"

namespace courier::admission {

// One choice as it is built up (whole responses) or sent (chunks).
struct choice_output {
  std::int32_t index = 0;
  std::string text;                        // chat: the content
  std::string reasoning;                   // chat: reasoning_content
  std::vector<tool_call_piece> tool_calls; // chat: one per call (whole) or per call touched (delta)
  std::vector<msg::token_id> token_ids;
  std::vector<msg::token_logprob> logprobs;
  // Echo with logprobs: the prompt's first token (which has no logprob) and the logprobs of the
  // others, listed before the completion's.
  std::optional<msg::token_id> prompt_first;
  std::vector<msg::token_logprob> prompt_logprobs;
  std::string finish_reason;  // empty while running
};

struct usage_totals {
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::int64_t cached_tokens = 0;
};

struct response_header {
  std::string id;       // "cmpl-..." or "chatcmpl-..."
  std::int64_t created = 0;
  std::string model;
};

// A response id: `prefix` and 24 random hex digits (as OpenAI's are random), so ids are unique
// across restarts and replicas, and say nothing about how many requests came before.
std::string response_id(const std::string& prefix);

nlohmann::json usage_json(const usage_totals& u);

// A whole non-streaming response.
nlohmann::json full_response(const api_request& r, const response_header& h,
                             const std::vector<choice_output>& choices, const usage_totals& u,
                             const text::tokenizer* tok);

// One stream chunk for one choice (delta text, maybe a finish reason); `first` adds the chat
// role.
nlohmann::json stream_chunk(const api_request& r, const response_header& h,
                            const choice_output& delta, bool first, const text::tokenizer* tok);

// The final usage chunk (choices empty).
nlohmann::json usage_chunk(const api_request& r, const response_header& h, const usage_totals& u);

// JSON text for the wire: invalid UTF-8 that reached a string (an echoed bad byte in an error
// message) becomes U+FFFD instead of an exception.
std::string wire(const nlohmann::json& j);

// "data: JSON\n\n"
std::string sse(const nlohmann::json& j);

}  // namespace courier::admission
