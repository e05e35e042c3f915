#pragma once
// The benchmark's requests, generated from a seed: vLLM's "random" dataset and sglang's
// "generated-shared-prefix". The same spec, sampler and seed give the same requests.
#include <cstdint>
#include <string>
#include <vector>

#include "tools/bench/token_sampler.hpp"

namespace courier::bench_tool {

enum class prompt_format { ids, text };

struct bench_request {
  std::vector<token_id> prompt_ids;  // the drawn ids (also kept for the text format)
  std::string prompt_text;           // the format's text; empty for ids
  std::int64_t input_len = 0;        // prompt_ids.size(): the client's own prompt length
  std::int64_t output_len = 0;       // max_tokens, >= 1
  std::int64_t group = -1;           // shared-prefix group; -1 for the random dataset
  std::string model;                 // --model's i-th name when it lists several; empty: the run's
  // Multi-turn: the conversation and the turn (0 first). A later turn is sent once the turn
  // before it ended, its prompt then being that turn's prompt, the token ids it generated and
  // this request's own message (prompt_ids); input_len counts only the message.
  std::int64_t turn = 0;
  std::int64_t follows = -1;  // the index of the turn before, in the request list; -1: none
};

// vLLM's RandomDataset: each prompt is `prefix_len` ids shared by all, then its own ids; the
// input and output lengths are uniform integers in [floor(len*(1-r)), floor(len*(1+r))]
// (at least 1). Invariants: num_prompts >= 1, input_len >= 1, output_len >= 1, 0 <= r < 1.
struct random_spec {
  std::int64_t num_prompts = 1000;
  std::int64_t input_len = 1024;
  std::int64_t output_len = 128;
  double range_ratio = 0.0;
  std::int64_t prefix_len = 0;
};

// sglang's generated-shared-prefix: num_groups system prompts of system_prompt_len ids; each
// group has prompts_per_group prompts = its system prompt + a question of question_len ids of
// its own. The requests are then shuffled with the seed, so groups interleave in the send
// order. With the text format the two parts are decoded separately and joined by "\n\n", as
// sglang joins them, so every prompt of a group starts with exactly the same text.
struct shared_prefix_spec {
  std::int64_t num_groups = 64;
  std::int64_t prompts_per_group = 16;
  std::int64_t system_prompt_len = 2048;
  std::int64_t question_len = 128;
  std::int64_t output_len = 256;
};

// Conversations of several turns (as sglang's multi-turn benchmarks): each conversation has a
// system prompt of system_prompt_len ids, then `turns` user messages of message_len ids, each
// answered with output_len tokens; turn t's prompt is the conversation so far, sent when turn
// t - 1 ended (its answer's ids taken from the stream: ids format only). The first turns come
// first in the list, in a shuffled order; a later turn `follows` the turn before.
struct multi_turn_spec {
  std::int64_t num_conversations = 16;
  std::int64_t turns = 4;
  std::int64_t system_prompt_len = 512;
  std::int64_t message_len = 128;
  std::int64_t output_len = 128;
};

std::vector<bench_request> multi_turn_dataset(const multi_turn_spec& spec,
                                              const token_sampler& ids, std::uint64_t seed);

std::vector<bench_request> random_dataset(const random_spec& spec, const token_sampler& ids,
                                          prompt_format format, std::uint64_t seed);

std::vector<bench_request> shared_prefix_dataset(const shared_prefix_spec& spec,
                                                 const token_sampler& ids, prompt_format format,
                                                 std::uint64_t seed);

}  // namespace courier::bench_tool
