#include "actors/scheduler/submit_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>
#include <vector>

#include "actors/scheduler/sequence_events.hpp"

namespace courier::actors {

std::string logit_bias_refusal(const msg::sampling_params& p, std::int32_t vocab_size) {
  const auto& tokens = p.logit_bias_tokens;
  const auto& values = p.logit_bias_values;
  if (tokens.size() != values.size()) {
    return fmt::format("logit_bias has {} token ids but {} values", tokens.size(), values.size());
  }
  if (tokens.size() > msg::max_logit_bias) {
    return fmt::format("logit_bias may have at most {} entries, got {}", msg::max_logit_bias,
                       tokens.size());
  }
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] >= static_cast<msg::token_id>(vocab_size)) {
      return fmt::format("logit_bias token id {} is outside the vocabulary of {}", tokens[i],
                         vocab_size);
    }
    if (!(values[i] >= -100.0f && values[i] <= 100.0f)) {  // NaN fails too
      return fmt::format("logit_bias value for token id {} must be in [-100, 100], got {}",
                         tokens[i], values[i]);
    }
  }
  std::vector<msg::token_id> sorted = tokens;
  std::sort(sorted.begin(), sorted.end());
  const auto twice = std::adjacent_find(sorted.begin(), sorted.end());
  if (twice != sorted.end()) {
    return fmt::format("logit_bias token id {} appears more than once", *twice);
  }
  return {};
}

std::string submit_refusal(const msg::submit& s, const msg::engine_ready& ready,
                           std::int64_t capacity, msg::error_code& code) {
  code = msg::error_code::invalid_request;
  const auto& p = s.sampling;
  if (s.prompt.empty()) return "the prompt is empty";
  const int min_tokens = p.prompt_logprobs >= 0 ? 0 : 1;  // 0: scoring the prompt only
  if (s.max_tokens < min_tokens) {
    return fmt::format("max_tokens must be at least {}, got {}", min_tokens, s.max_tokens);
  }
  if (p.logprobs > 20) return fmt::format("logprobs must be at most 20, got {}", p.logprobs);
  if (p.prompt_logprobs > 20) {
    return fmt::format("prompt_logprobs must be at most 20, got {}", p.prompt_logprobs);
  }
  if (!(p.temperature >= 0)) return "temperature must be non-negative";
  if (!(p.top_p > 0 && p.top_p <= 1)) return "top_p must be in (0, 1]";
  if (!(p.min_p >= 0 && p.min_p <= 1)) return "min_p must be in [0, 1]";
  if (!(p.repetition_penalty > 0)) return "repetition_penalty must be positive";
  if (p.min_tokens < 0 || p.min_tokens > s.max_tokens) {
    return fmt::format("min_tokens must be in [0, max_tokens = {}], got {}", s.max_tokens,
                       p.min_tokens);
  }
  if (p.min_tokens > 0 && end_tokens_of(s, ready.eos_token_ids).size() > msg::max_end_tokens) {
    return fmt::format("with min_tokens, the EOS ids and stop_token_ids may be at most {} tokens",
                       msg::max_end_tokens);
  }
  if (std::string why = logit_bias_refusal(p, ready.vocab_size); !why.empty()) return why;
  if (p.embed && (s.max_tokens != 1 || p.prompt_logprobs >= 0)) {
    return fmt::format("an embedding request computes its prompt and one row: max_tokens 1 "
                       "(got {}), no prompt logprobs", s.max_tokens);
  }
  for (msg::token_id t : s.prompt) {
    if (t >= static_cast<msg::token_id>(ready.vocab_size)) {
      return fmt::format("token id {} is outside the vocabulary of {}", t, ready.vocab_size);
    }
  }
  code = msg::error_code::too_long;
  const auto len = static_cast<std::int64_t>(s.prompt.size());
  if (len >= ready.max_model_len) {
    return fmt::format("the prompt has {} tokens; max_model_len is {}", len, ready.max_model_len);
  }
  const std::int64_t total = std::min<std::int64_t>(len + s.max_tokens, ready.max_model_len);
  if (total > capacity) {
    return fmt::format("the request needs up to {} tokens of KV cache; the cache holds {}", total,
                       capacity);
  }
  code = msg::error_code::none;
  return {};
}

std::string batch_refusal(const std::vector<msg::submit>& choices, const choice_refusal& refused,
                          std::int64_t num_waiting, std::int64_t max_waiting,
                          msg::error_code& code) {
  code = msg::error_code::invalid_request;
  if (choices.empty()) return "a submit batch has no choices";
  // The first invalid choice refuses the batch (a 4xx is the client's to fix, whatever the load).
  std::unordered_set<msg::request_id> ids;
  for (const msg::submit& c : choices) {
    std::string why = refused(c, code);
    if (!why.empty()) return why;
    code = msg::error_code::invalid_request;
    if (!ids.insert(c.id).second) {
      return fmt::format("request id {} appears twice in one batch", c.id);
    }
    if (c.reply_to != choices.front().reply_to) {
      return "the choices of one batch must share one reply_to";
    }
  }
  const auto n = static_cast<std::int64_t>(choices.size());
  if (n > max_waiting) {
    return fmt::format(
        "the request has {} choices (prompts x n); at most {} can wait (server.max_waiting)", n,
        max_waiting);
  }
  code = msg::error_code::overloaded;
  if (num_waiting + n > max_waiting) {
    return n == 1 ? fmt::format("the server is overloaded: {} requests are waiting", num_waiting)
                  : fmt::format("the server is overloaded: {} requests are waiting, no room "
                                "for {} more",
                                num_waiting, n);
  }
  code = msg::error_code::none;
  return "";
}

}  // namespace courier::actors
