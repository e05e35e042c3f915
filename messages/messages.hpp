#pragma once
// The messages that cross actors: plain aggregates with an inspect() and no behaviour. They carry
// ids and values, never pointers into another actor's memory (the one pointer, output_grammar,
// is to an object every actor may share). Registered in type_ids.hpp.
#include <caf/actor.hpp>
#include <caf/meta/type_name.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace courier::grammar {
class mask_cache;
}

namespace courier::msg {

using token_id = std::uint32_t;
using request_id = std::uint64_t;

// How a request ended; none while it runs.
enum class finish_reason : std::uint8_t { none, stop, length, cancelled, error };
const char* to_string(finish_reason r);

// Why a request failed; maps to an HTTP status in admission.
enum class error_code : std::uint8_t {
  none,
  invalid_request,  // 400: bad parameters (max_tokens < 1, ...)
  too_long,         // 400: prompt (+ max_tokens) over max_model_len or over the KV capacity
  overloaded,       // 503: the waiting queue is full
  engine_failure,   // 500: the forward pass failed
  shutting_down,    // 503: the server is stopping
};
const char* to_string(error_code c);

// A grammar the output must follow (structured outputs: response_format, tools, guided_*):
// admission compiles it, the engine masks each sampled position with it. The mask cache holds
// the immutable compiled grammar and the model's vocabulary and locks its own memoised masks,
// so it is shared, not owned: the one pointer a message carries. In-process only: inspect()
// sees the key, never the pointer. To a replica on another machine (cluster.replicas) the
// router sends the GBNF text instead (wire_gbnf), which the replica compiles against its own
// vocabulary (actors/cluster/replica_gate.hpp).
struct output_grammar {
  static constexpr std::size_t process_local_fields = 2;  // masks, gbnf
  std::shared_ptr<grammar::mask_cache> masks;  // null: the output is free
  std::shared_ptr<const std::string> gbnf;     // the GBNF text masks were compiled from
  std::string wire_gbnf;  // on the wire only: *gbnf (masks do not travel)
  std::string key;  // what it was compiled from, short (kind and a hash), for traces
  // Non-empty: the output is free until these bytes appear in it (a tool call's start marker);
  // the grammar then holds what follows, until it is complete (terminated). After that the
  // output is free again when trigger_repeats, else only EOS may follow.
  std::string trigger;
  bool trigger_repeats = true;
  explicit operator bool() const { return masks != nullptr; }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, output_grammar& x) {
  return f(caf::meta::type_name("output_grammar"), x.wire_gbnf, x.key, x.trigger,
           x.trigger_repeats);
}

// What the client asked for. Defaults are OpenAI's.
struct sampling_params {
  float temperature = 1.0f;         // 0: greedy
  std::int32_t top_k = 0;           // <= 0: off
  float top_p = 1.0f;
  float min_p = 0.0f;
  float repetition_penalty = 1.0f;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  std::uint64_t seed = 0;           // used when has_seed; otherwise the scheduler draws one
  bool has_seed = false;
  std::int32_t logprobs = -1;       // -1: none; 0..20: the token's logprob and that many top ones
  std::int32_t prompt_logprobs = -1;  // -1: none; 0..20: the same for every prompt token after
                                      // the first (the prompt is then computed, not cached)
  // OpenAI's logit_bias as two parallel lists: logit_bias_values[i] is added to the raw logit of
  // logit_bias_tokens[i] before penalties, temperature and filters (greedy too). Same length, at
  // most max_logit_bias entries, distinct tokens inside the vocabulary, finite values in
  // [-100, 100]; the scheduler refuses anything else. Reported logprobs stay the raw model's.
  std::vector<token_id> logit_bias_tokens;
  std::vector<float> logit_bias_values;
  output_grammar grammar;  // each sampled token keeps the output inside it (EOS where complete)
  // vLLM's min_tokens: no end before the output has this many tokens. The sampler bans
  // end_tokens until then (the scheduler's list at admission: the model's EOS ids unless
  // ignore_eos, and the request's stop_token_ids; at most gpu::max_end_tokens), and admission
  // matches no stop string before. 0..max_tokens.
  std::int32_t min_tokens = 0;
  std::vector<token_id> end_tokens;
  // An embedding request (/v1/embeddings): the row that samples its first token also returns
  // the hidden state there (the prompt's last position, after the final norm), which its
  // token_event carries. Its max_tokens is 1; the token itself is not wanted.
  bool embed = false;
};

// Whether any penalty is on: the sampler then needs the sequence's tokens counted.
inline bool penalised(const sampling_params& s) {
  return s.repetition_penalty != 1.0f || s.presence_penalty != 0.0f || s.frequency_penalty != 0.0f;
}

// The most logit_bias entries a request may have (OpenAI's limit); the engine reserves device
// memory for this many per sequence.
inline constexpr std::size_t max_logit_bias = 300;
// The most end tokens (EOS ids and stop_token_ids) a request with min_tokens may have; the
// engine's device memory for them is reserved for it.
inline constexpr std::size_t max_end_tokens = 64;

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sampling_params& x) {
  return f(caf::meta::type_name("sampling_params"), x.temperature, x.top_k, x.top_p, x.min_p,
           x.repetition_penalty, x.presence_penalty, x.frequency_penalty, x.seed, x.has_seed,
           x.logprobs, x.prompt_logprobs, x.logit_bias_tokens, x.logit_bias_values, x.grammar,
           x.min_tokens, x.end_tokens, x.embed);
}

// admission -> scheduler: start a request. token_events go to reply_to.
struct submit {
  request_id id = 0;
  std::string tenant;                    // empty: no tenant
  std::string adapter;                   // empty: the base model
  std::vector<token_id> prompt;
  sampling_params sampling;
  std::vector<token_id> stop_token_ids;  // besides EOS
  std::int32_t max_tokens = 16;          // >= 1; 0 only with prompt logprobs (scoring)
  bool ignore_eos = false;
  caf::actor reply_to;                   // receives token_event
  std::int64_t arrival_ns = 0;           // steady clock, when the client's request arrived;
                                         // 0: when the scheduler receives the submit
  // The fairness group: the HTTP request this choice belongs to, named by its first choice's
  // id. Waiting sequences are admitted round-robin across groups. 0: a group of its own (in a
  // submit_batch: the batch's first choice's id).
  request_id group = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, submit& x) {
  return f(caf::meta::type_name("submit"), x.id, x.tenant, x.adapter, x.prompt, x.sampling,
           x.stop_token_ids, x.max_tokens, x.ignore_eos, x.reply_to, x.arrival_ns, x.group);
}

// admission -> scheduler: one HTTP request's choices, queued all together or refused all
// together (nothing queued). Every choice has the same reply_to, which gets one submit_ack
// before any token_event of the batch.
struct submit_batch {
  std::vector<submit> choices;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, submit_batch& x) {
  return f(caf::meta::type_name("submit_batch"), x.choices);
}

// scheduler -> a submit_batch's reply_to: whether the batch was queued. Refused (error !=
// none): every choice also gets its final error event, with the same error and message.
struct submit_ack {
  request_id group = 0;  // the batch's first choice's id
  error_code error = error_code::none;
  std::string message;   // one line, when refused
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, submit_ack& x) {
  return f(caf::meta::type_name("submit_ack"), x.group, x.error, x.message);
}

// Why admission stops a request early.
enum class cancel_reason : std::uint8_t {
  client_gone,  // the client went away: the request ends as cancelled
  stop_string,  // a stop string matched in the text: a normal finish (finish_reason::stop)
};
const char* to_string(cancel_reason r);

// admission -> scheduler: stop a request now and free what it holds (the final event says
// cancelled, or stop for a stop string). Unknown ids (already ended) are ignored.
struct cancel {
  request_id id = 0;
  cancel_reason reason = cancel_reason::client_gone;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cancel& x) {
  return f(caf::meta::type_name("cancel"), x.id, x.reason);
}

struct token_logprob {
  token_id token = 0;
  float logprob = 0.0f;
  std::vector<token_id> top_ids;   // best first
  std::vector<float> top_logprobs;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, token_logprob& x) {
  return f(caf::meta::type_name("token_logprob"), x.token, x.logprob, x.top_ids, x.top_logprobs);
}

struct usage {
  std::int32_t prompt_tokens = 0;
  std::int32_t completion_tokens = 0;
  std::int32_t cached_tokens = 0;  // prompt tokens whose KV came from the prefix cache
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, usage& x) {
  return f(caf::meta::type_name("usage"), x.prompt_tokens, x.completion_tokens, x.cached_tokens);
}

// scheduler -> reply_to: new tokens of one request, and its end. Exactly one event per request
// has finish != none, and it is the last.
struct token_event {
  request_id id = 0;
  std::vector<token_id> tokens;         // new since the previous event (may be empty at the end)
  std::vector<token_logprob> logprobs;  // parallel to tokens when logprobs were asked
  // Prompt tokens 1..n-1, each with its logprob given the tokens before it; in the request's
  // first event, when prompt logprobs were asked.
  std::vector<token_logprob> prompt_logprobs;
  // sampling.embed: the prompt's last hidden state (hidden_size floats), in the event of its
  // token.
  std::vector<float> embedding;
  finish_reason finish = finish_reason::none;
  error_code error = error_code::none;  // when finish == error
  std::string message;                  // human-readable reason when finish == error
  usage use;                            // totals so far
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, token_event& x) {
  return f(caf::meta::type_name("token_event"), x.id, x.tokens, x.logprobs, x.prompt_logprobs,
           x.embedding, x.finish, x.error, x.message, x.use);
}

}  // namespace courier::msg
