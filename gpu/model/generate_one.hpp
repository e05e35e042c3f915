#pragma once
// Generation of one sequence at a time, straight on a model: the path `courier generate` takes
// until the scheduler exists, and the "alone" reference that batched runs are compared with.
#include <functional>
#include <string>
#include <vector>

#include "gpu/model/llama.hpp"

namespace courier::model {

struct generate_request {
  std::vector<token_id> prompt;
  std::int32_t max_tokens = 16;
  gpu::sampling_row sampling;           // seed and options; draw_index is set per token
  std::vector<gpu::bias_token> bias_tokens;  // the logit bias, distinct tokens
  std::vector<token_id> stop_token_ids;  // besides the model's EOS ids
  bool ignore_eos = false;
  // vLLM's min_tokens: no end token (the stop ids, and the EOS ids unless ignore_eos) is drawn
  // before the output has this many tokens.
  std::int32_t min_tokens = 0;
  std::int32_t prefill_chunk = 0;       // 0: the whole prompt in one pass
  std::int64_t max_model_len = 0;       // 0: the model's max_position_embeddings
  std::int32_t lora_slot = -1;          // the model's LoRA slot it runs with; -1: none
  // An allowed-token mask per sampled token (a grammar's): given the output so far, sets the
  // allowed bits of `words` (gpu::mask_words_per_row(vocab) zeros). Unset: no mask. A token no mask allows
  // (gpu::no_allowed_token) ends the output with finish_reason "error".
  std::function<void(const std::vector<token_id>& output, std::vector<std::uint32_t>& words)> mask;
};

struct generate_result {
  std::vector<token_id> tokens;
  std::vector<gpu::sample_result> samples;  // one per token (logprobs)
  std::string finish_reason;                // "stop" (EOS or stop id), "length" or "error"
};

// Uses blocks [0, n) of `cache` for the sequence. Throws std::invalid_argument when the prompt is
// empty or does not fit (max_model_len, cache size).
generate_result generate_one(llama_model& model, kv_cache& cache, const generate_request& req);

// Penalty entries for a sequence with this prompt and output so far (distinct tokens).
std::vector<gpu::penalty_token> penalty_tokens_for(const std::vector<token_id>& prompt,
                                                   const std::vector<token_id>& output);

}  // namespace courier::model
