#pragma once
// What every request actor of one server shares, read-only once the server runs: the model's
// name and limits, its tokenizer and chat template (either may be absent), the API keys, and the
// scheduler. The request-id counter is the one mutable member (atomic).
#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "actors/scheduler/scheduler_actor.hpp"
#include "actors/telemetry/telemetry_actor.hpp"
#include "text/jinja/chat_template.hpp"
#include "text/tokenizer/tokenizer.hpp"

namespace courier::admission {

struct admission_context {
  std::string model_name;
  std::int64_t max_model_len = 0;
  std::int32_t vocab_size = 0;
  std::int32_t max_n = 16;                             // most choices per request
  std::shared_ptr<const text::tokenizer> tok;          // null: token ids only
  std::shared_ptr<const text::jinja::chat_template> chat;  // null: no chat endpoint
  std::string bos_token, eos_token;                    // for the template
  std::map<std::string, std::string> api_keys;         // key -> tenant; empty: no auth
  actors::scheduler_actor scheduler;
  actors::telemetry_actor telemetry;                   // null: no /metrics
  std::atomic<std::uint64_t> next_request_id{1};
  std::atomic<std::int64_t> requests_in_flight{0};
};

}  // namespace courier::admission
