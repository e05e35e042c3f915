#pragma once
// What the scheduler tells a request's client (messages/token_event) and the telemetry actor
// (msg::request_summary): the events that carry its tokens, its end or its refusal, and which
// of a step's sampled tokens it takes. Pure functions of the sequence (or the refused submit);
// when and to whom they go is the scheduler core's choice.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "actors/scheduler/sequence.hpp"
#include "messages/messages.hpp"
#include "messages/telemetry.hpp"

namespace courier::actors {

// How many of a row's sampled tokens s takes, in order, and why it ends with the last of them
// (none: it takes them all and goes on). It ends at the first token that is an EOS id (unless
// ignore_eos) or one of its stop_token_ids (stop, the token included, as OpenAI's and vLLM's
// finish_reason "stop"), or that makes its tokens max_total long (length).
struct tokens_taken {
  std::size_t count = 0;
  msg::finish_reason why = msg::finish_reason::none;
};
tokens_taken take_tokens(const sequence& s, const std::vector<msg::token_id>& sampled,
                         const std::vector<msg::token_id>& eos_ids);

// The tokens that would end a submit by stop (take_tokens' set): the EOS ids unless
// ignore_eos, and its stop_token_ids, each once, in that order. min_tokens bans them until the
// output is that long.
std::vector<msg::token_id> end_tokens_of(const msg::submit& s,
                                         const std::vector<msg::token_id>& eos_ids);

// The event carrying `tokens` to s's client: their logprobs when it asked for them (logprobs
// >= 0), the prompt's logprobs once (the first event after they are all collected; marks them
// sent), its usage so far, and `why` it ends (none: it goes on).
msg::token_event tokens_event(sequence& s, std::vector<msg::token_id> tokens,
                              std::vector<msg::token_logprob> lp, msg::finish_reason why);

// Its final event when it fails: finish error, the code and message, its usage so far.
msg::token_event error_event(const sequence& s, msg::error_code code, std::string message);

// Its summary for the report when it ends at now_ns (its intervals move there).
msg::request_summary summary_of(sequence& s, msg::finish_reason why, msg::error_code code,
                                std::int64_t now_ns);

// A refused submit's one event (finish error, its prompt's length as usage) and summary (end
// to end from its arrival, when it has one).
msg::token_event refusal_event(const msg::submit& s, msg::error_code code, std::string why);
msg::request_summary refusal_summary(const msg::submit& s, msg::error_code code,
                                     std::int64_t now_ns);

}  // namespace courier::actors
