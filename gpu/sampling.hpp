#pragma once
// What sampling is asked to do for each row of logits, and what it answers.
#include <cstdint>
#include <vector>

namespace courier::gpu {

// Per-row sampling parameters. The order of processing is fixed: the allowed-token mask (a
// grammar's: every other token's logit becomes -inf), then logit bias (OpenAI's logit_bias,
// added to the raw logit, as vLLM applies it before penalties), then the end tokens banned
// below min_tokens (-inf), then HF's order: penalties,
// temperature, top-k, top-p, min-p, then a draw; greedy is the argmax of the biased, penalised
// logits. Logprobs are always those of the raw model distribution (log_softmax of the unprocessed
// logits, before the bias too), as vLLM reports by default: a token forced by a +100 bias reports
// the probability the model gave it.
struct sampling_row {
  float temperature = 0.0f;         // <= 0: greedy (argmax; ties to the lowest id)
  std::int32_t top_k = 0;           // <= 0: off
  float top_p = 1.0f;               // >= 1: off
  float min_p = 0.0f;               // <= 0: off
  float repetition_penalty = 1.0f;  // 1: off; on tokens in prompt or output (HF, vLLM)
  float presence_penalty = 0.0f;    // 0: off; on tokens in the output (OpenAI)
  float frequency_penalty = 0.0f;   // 0: off; times the count in the output (OpenAI)
  std::uint64_t seed = 0;           // the request's seed
  std::uint64_t draw_index = 0;     // which draw of the request this is (the output index)
  std::int32_t num_logprobs = 0;    // top-N logprobs to return, 0..max_logprobs
  std::int32_t penalty_begin = 0;   // this row's entries in sampling_batch::penalty_tokens
  std::int32_t penalty_count = 0;
  // >= 0: this row's penalties are list penalty_list of sampling_batch::penalty_lists (kept on
  // the device), and penalty_count is 0; -1: its slice of penalty_tokens, if any.
  std::int32_t penalty_list = -1;
  std::int32_t bias_begin = 0;      // this row's entries in sampling_batch::bias_tokens
  std::int32_t bias_count = 0;      // 0..max_bias_tokens
  // >= 0: this row's bias_count bias entries are list bias_list of sampling_batch::bias_lists
  // (kept on the device), and bias_begin is 0; -1: its slice of bias_tokens.
  std::int32_t bias_list = -1;
  // >= 0: score this token instead of choosing one (prompt logprobs): the result's token is
  // score_token, its logprob the raw one, the top-N as for any row; nothing is drawn. Such a row
  // has no mask, bias or penalties (refused otherwise) and score_token < vocab.
  std::int32_t score_token = -1;
  // >= 0: only tokens whose bit is set in sampling_batch::mask_words[mask_begin,
  // + mask_words_per_row(vocab)) may be drawn (token t: bit t % 32 of word t / 32); -1: none.
  std::int64_t mask_begin = -1;
  // vLLM's min_tokens: while draw_index < end_until, the row's end tokens (EOS and the request's
  // stop token ids: sampling_batch::end_tokens[end_begin, + end_count)) get -inf after the mask
  // and the bias, so none is drawn before the output is end_until tokens long. A row's positions
  // share its slice, each banning by its own draw_index. 0..max_end_tokens entries; no scoring
  // row has any.
  std::uint64_t end_until = 0;
  std::int32_t end_begin = 0;
  std::int32_t end_count = 0;
};


inline constexpr std::int64_t mask_words_per_row(std::int64_t vocab) { return (vocab + 31) / 32; }

// sample_result::token of a masked row that has no token it may draw (the mask allows none, or
// each allowed token's logit is -inf or NaN): the sequence cannot go on inside its grammar, and
// the caller ends it with an error. Never an id.
inline constexpr std::uint32_t no_allowed_token = 0xFFFFFFFFu;

inline constexpr std::int32_t max_logprobs = 20;

// A token that penalties apply to: distinct per row. Three 32-bit words, so a list kept on the
// device is written as int32 words (device::copy_tokens).
struct penalty_token {
  std::uint32_t token = 0;
  std::int32_t output_count = 0;  // occurrences in the output so far
  std::int32_t in_prompt = 0;     // 1: the token is in the prompt
};
static_assert(sizeof(penalty_token) == 3 * sizeof(std::int32_t),
              "penalty_token is written as three int32 words");

// A token whose logit gets `bias` added before anything else: distinct per row. The bias is
// static over a request, so the positions of a row that verifies drafts share one slice.
struct bias_token {
  std::uint32_t token = 0;
  float bias = 0.0f;  // finite; the API allows [-100, 100]: -100 bans, +100 forces
};

// At most this many bias tokens per row (OpenAI's limit on logit_bias entries); the engine's
// device memory for bias tokens is reserved for it, and requests with more are refused.
inline constexpr std::int32_t max_bias_tokens = 300;

// At most this many end tokens per row (the model's EOS ids and a request's stop_token_ids);
// requests with min_tokens and more are refused.
inline constexpr std::int32_t max_end_tokens = 64;

struct sampling_batch {
  std::vector<sampling_row> rows;               // one per logits row
  std::vector<penalty_token> penalty_tokens;    // rows index into this
  std::vector<bias_token> bias_tokens;          // rows index into this; slices may be shared
  std::vector<std::uint32_t> mask_words;        // rows index into this; slices may be shared
  std::vector<std::uint32_t> end_tokens;        // rows index into this; slices may be shared
  // Penalty lists kept in device memory across steps (the model's, one per sequence slot), read
  // in place: list l is the first penalty_list_lens[l] of the penalty_list_stride entries at
  // penalty_lists + l * penalty_list_stride. Rows with penalty_list >= 0 use them.
  const penalty_token* penalty_lists = nullptr;
  const std::int32_t* penalty_list_lens = nullptr;
  std::int32_t penalty_list_stride = 0;
  std::int32_t num_penalty_lists = 0;
  // Bias lists kept in device memory (the model's, one per sequence slot): list l is the
  // max_bias_tokens entries at bias_lists + l * max_bias_tokens, of which a row with bias_list
  // l uses its first bias_count.
  const bias_token* bias_lists = nullptr;
  std::int32_t num_bias_lists = 0;
};

struct sample_result {
  std::uint32_t token = 0;
  float logprob = 0.0f;                         // raw log-probability of `token`
  std::vector<std::uint32_t> top_ids;           // num_logprobs best ids, best first (ties: lower id)
  std::vector<float> top_logprobs;
};

}  // namespace courier::gpu
