#pragma once
// OpenAI request bodies (/v1/completions, /v1/chat/completions), parsed and validated into what
// the request actor needs. Every problem is an api_error with the HTTP status and the field.
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "actors/admission/admission_context.hpp"
#include "messages/messages.hpp"

namespace courier::admission {

// An OpenAI-style error: {"error": {"message", "type", "param", "code"}} with an HTTP status.
// `code` is OpenAI's string code ("invalid_api_key", "model_not_found", ...); empty: null.
struct api_error : std::runtime_error {
  int status;
  std::string type;
  std::string param;
  std::string code;
  api_error(int status_code, std::string message, std::string param_name = {},
            std::string error_type = "invalid_request_error", std::string error_code = {})
      : std::runtime_error(std::move(message)),
        status(status_code),
        type(std::move(error_type)),
        param(std::move(param_name)),
        code(std::move(error_code)) {}
  nlohmann::json to_json() const;
};

enum class endpoint { completions, chat };

struct api_request {
  endpoint kind = endpoint::completions;
  std::string model;
  std::vector<std::vector<msg::token_id>> prompts;  // completions: one per prompt; chat: one
  std::int32_t n = 1;
  std::int32_t max_tokens = 16;          // 0 only with echo (no generation)
  bool stream = false;
  bool include_usage = false;            // stream_options.include_usage
  bool echo = false;                     // completions: the prompt text before the completion
  std::int32_t logprobs = -1;            // -1: none; else top-N alternatives per token
  msg::sampling_params sampling;         // seed per choice is derived in the request actor
  std::vector<std::string> stop;         // stop strings (never in the output)
  std::vector<msg::token_id> stop_token_ids;
  bool ignore_eos = false;
  bool skip_special_tokens = true;
  bool return_token_ids = false;         // add token_ids to each choice (always without tokenizer)
};

// Parses and validates a body; tokenizes (and for chat renders the template). Throws api_error.
api_request parse_api_request(endpoint kind, const std::string& body,
                              const admission_context& ctx);

}  // namespace courier::admission
