#pragma once
// What one SSE `data:` payload of an OpenAI streaming response says, and the request bodies
// that ask for such a stream. JSON stays in here: the client above sees plain values.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <string_view>

#include "tools/bench/dataset.hpp"

namespace courier::bench_tool {

enum class api_kind { completions, chat };  // /v1/completions, /v1/chat/completions

// The chat API for an endpoint ending in "chat/completions", else completions.
api_kind api_for_endpoint(std::string_view endpoint);

struct usage_counts {
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::int64_t cached_tokens = 0;  // prompt_tokens_details.cached_tokens; 0 when absent
};

// One payload. As vLLM counts: a payload whose "choices" is non-empty is a content chunk
// (one TTFT or ITL sample, whatever its text); "usage" (non-null) is read from any payload.
struct stream_item {
  bool done = false;     // the "[DONE]" sentinel
  bool content = false;  // non-empty "choices"
  std::string text;      // choices[0].text, or choices[0].delta.content for chat
  std::vector<std::int64_t> token_ids;  // choices[0].token_ids (return_token_ids), if any
  std::optional<usage_counts> usage;
  std::optional<std::string> error;  // an {"error": ...} payload, or data that is not JSON
};

stream_item parse_stream_data(std::string_view data, api_kind api);

// The message of an error body {"error": {"message": ...}} (or {"message": ...}); otherwise
// the start of the body itself, at most 200 bytes.
std::string error_message(std::string_view body);

struct body_params {
  std::string model;
  double temperature = 0.0;
  bool ignore_eos = false;
  std::string extra_body;  // a JSON object's text whose members are added; empty: none
  bool return_token_ids = false;  // ask for each chunk's token ids (the multi-turn dataset)
};

// A streaming request with usage: completions send "prompt" (ids, or the text when there is
// one) and "max_tokens"; chat sends one user message with the text (or the ids joined by
// spaces when there is no text) and "max_completion_tokens", as vLLM does.
std::string request_body(const bench_request& r, const body_params& p, api_kind api);

// The first "id" of a GET /v1/models body; nullopt when there is none.
std::optional<std::string> first_model_id(std::string_view body);

}  // namespace courier::bench_tool
