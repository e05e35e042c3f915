#pragma once
// What the scheduler refuses in a submit whatever the load: sampling parameters out of their
// documented ranges (OpenAI's: logprobs at most 20, logit_bias values in [-100, 100]), token ids
// outside the vocabulary, a prompt at max_model_len, a request the whole KV cache cannot hold.
// Pure functions of the submit and the engine's shape; the core adds what depends on its state
// (ids in use, adapters it knows: scheduler_core::refusal).
#include <cstdint>
#include <string>

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

}  // namespace courier::actors
