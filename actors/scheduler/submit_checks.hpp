#pragma once
// What the scheduler refuses in a submit whatever the load: sampling parameters out of their
// documented ranges (OpenAI's: logprobs at most 20, logit_bias values in [-100, 100]), token ids
// outside the vocabulary, a prompt at max_model_len, a request the whole KV cache cannot hold.
// And what refuses a request's choices together: one choice refused, ids twice, more choices
// than may ever wait, or than there is room for now. Pure functions of the submits, the
// engine's shape and the queue's size; the core adds what depends on its state (ids in use,
// adapters it knows: scheduler_core::refusal).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "messages/messages.hpp"
#include "messages/step.hpp"

namespace courier::actors {

// Why a request's logit_bias cannot be applied (lengths differ, over msg::max_logit_bias
// entries, a token outside the vocabulary, a value outside [-100, 100], a token twice), or "".
std::string logit_bias_refusal(const msg::sampling_params& p, std::int32_t vocab_size);

// Why a submit cannot be served by this engine, whose KV cache holds `capacity` tokens, or "".
// `code` says which error: invalid_request (400) for parameters and tokens, too_long (400) for
// the model's and the cache's length, none when it can be served.
std::string submit_refusal(const msg::submit& s, const msg::engine_ready& ready,
                           std::int64_t capacity, msg::error_code& code);

// Why a request's choices cannot be queued together (all or none), or "", with `code`: the
// first choice that `refused` refuses (its own reason and code), or whose id an earlier one has,
// or whose reply_to differs from the first's (invalid_request); no choices, or more than
// max_waiting (invalid_request: never servable); more than there is room for behind
// `num_waiting` (overloaded: the server's 503, worth a retry).
using choice_refusal = std::function<std::string(const msg::submit&, msg::error_code&)>;
std::string batch_refusal(const std::vector<msg::submit>& choices, const choice_refusal& refused,
                          std::int64_t num_waiting, std::int64_t max_waiting,
                          msg::error_code& code);

}  // namespace courier::actors
