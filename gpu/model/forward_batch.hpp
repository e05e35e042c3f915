#pragma once
// One forward pass's input and output on the host: a ragged batch of rows, each a sequence's
// prefill chunk or decode token(s) at any start position. A row names its sequence's slot of
// the model's per-sequence device state (llama_model::token_slots()): its block table is kept
// there, and its penalty list and logit bias when it has them; the batch carries only what a
// launch writes into them (one layout, whoever builds the batch: engine, generate_one, tests).
#include <cstdint>
#include <vector>

#include "gpu/sampling.hpp"

namespace courier::model {

using token_id = std::uint32_t;

enum class logits_mode : std::uint8_t {
  none,  // a prefill chunk that is not the prompt's last
  last,  // logits of the row's last token (what sampling uses)
  all,   // logits of every token of the row (prompt logprobs, tests)
};

struct forward_row {
  std::vector<token_id> tokens;           // fed this step; non-empty
  std::int32_t start_pos = 0;             // position of tokens[0]; earlier ones are cached
  std::vector<std::int32_t> block_table;  // covers [0, start_pos + tokens.size())
  // Borrowed in place of block_table when set (the engine's copy: no copy per step of a table
  // that grows with the context); it must outlive launch(). table() is the one that applies.
  const std::vector<std::int32_t>* table_ref = nullptr;
  const std::vector<std::int32_t>& table() const { return table_ref ? *table_ref : block_table; }
  logits_mode logits = logits_mode::last;  // last: the last num_sample positions' logits
  bool sample = false;                    // sample from the last num_sample positions
  // Draft verification: the last num_sample positions are each sampled, position j with
  // draw_index + j (so each draw is the one a one-token-per-step decode would make). Rows with
  // penalties sample one position only (penalties would change between positions); a logit bias
  // is the same at every position. A mask (sampling.mask_begin >= 0) is one per position:
  // position j's starts at mask_begin + j * gpu::mask_words_per_row(vocab) in mask_words.
  std::int32_t num_sample = 1;
  gpu::sampling_row sampling;  // penalty_begin, bias_begin: the slices written (*_init)
  bool return_logits = false;             // copy this row's logits to the host
  // Copy its last position's hidden state after the final norm (what lm_head projects, and
  // what a sentence-transformers last-token pooling reads) to the host: row_output::hidden.
  // Needs logits (not none); never run in a decode graph.
  bool return_hidden = false;
  // Next-token slots (llama_model::token_slots(), one per running sequence, on the device):
  // token_slot >= 0: tokens[0] (one token, a placeholder on the host) is instead the token in
  // that slot, read on the device when this launch runs: a step planned while the one before
  // ran, fed what it sampled. next_slot >= 0 (a row that samples one position): the token this
  // row samples is written to that slot on the device, right after sampling.
  std::int32_t token_slot = -1;
  std::int32_t next_slot = -1;
  // Block tables kept on the device (required): the row's block table is in the model's table
  // row table_slot (one per next-token slot) across launches: its first table_keep entries are
  // there already (launches before wrote them; 0 writes it whole), and this launch writes the
  // rest of table(). Attention reads the tables there; a step uploads only the entries written.
  std::int32_t table_slot = -1;
  std::int32_t table_keep = 0;
  // Penalties kept on the device (one list per slot, llama_model::penalty_stride() entries):
  // penalty_slot >= 0 (a row that samples one position) samples with that slot's list, and its
  // sampled token is counted into the list on the device right after sampling, so the next
  // step's row sees it without the host. penalty_init: the list is first replaced by the row's
  // slice (sampling.penalty_begin, penalty_count) of penalty_tokens: its sequence's distinct
  // tokens so far (in the prompt; times in the output). Without it the slice is empty and the
  // list is what the launches before left. A row without a slot samples without penalties.
  std::int32_t penalty_slot = -1;
  bool penalty_init = false;
  // Logit bias kept on the device (one list of gpu::max_bias_tokens entries per slot): a row
  // with a bias (sampling.bias_count > 0) samples with slot bias_slot's first bias_count
  // entries; bias_init first writes the row's slice (sampling.bias_begin, bias_count) of
  // bias_tokens there. A request's bias does not change, so a sequence's list is written once
  // per slot.
  std::int32_t bias_slot = -1;
  bool bias_init = false;
  // Hybrid models only (required there): the row of the model's Mamba-2 states its sequence
  // continues from (from zeros when start_pos is 0) and leaves its state in.
  std::int32_t state_slot = -1;
  // Hybrid state snapshots (rows of the same state buffers): state_restore >= 0 replaces the
  // row's state with that row's before the row runs (a snapshot of the sequence at start_pos,
  // its KV blocks cached); state_snapshot >= 0 copies the row's state there after the row ran
  // (the sequence at start_pos + tokens.size()).
  std::int32_t state_restore = -1;
  std::int32_t state_snapshot = -1;
  // The LoRA adapter the row runs with: a slot of the model's pool (llama_model::load_lora);
  // -1: the base model.
  std::int32_t lora_slot = -1;
  // Prompt logprobs, scored on the device: empty, or one entry per token, where entry i >= 0 is
  // the token whose raw logprob (and top score_top_n alternatives) position i's logits give;
  // -1 scores nothing there. Needs logits == all. Only the [n, score_top_n] answers come back
  // (row_output::scores), never the [n, vocab] logits.
  std::vector<std::int32_t> score_targets;
  std::int32_t score_top_n = 0;  // 0..gpu::max_logprobs
};

// A hybrid's state row moved to or from the host tier (reserve_host_states), before any row.
struct state_copy {
  bool to_host = false;  // state row -> host row; else host row -> state row
  std::int32_t row = -1;
  std::int32_t host_row = -1;
};

struct forward_batch {
  std::vector<forward_row> rows;
  std::vector<state_copy> state_copies;  // run first, in order
  // What rows with penalty_init and bias_init write into their slots' lists.
  std::vector<gpu::penalty_token> penalty_tokens;
  std::vector<gpu::bias_token> bias_tokens;  // at most gpu::max_bias_tokens per row, distinct
  std::vector<std::uint32_t> mask_words;     // allowed-token masks (a grammar's), rows index in
  // End tokens banned below min_tokens (sampling.end_begin, end_count): a row's positions share
  // its slice; at most gpu::max_end_tokens per row.
  std::vector<std::uint32_t> end_tokens;
  bool return_logits = false;             // copy every row's logits to the host (tests)
};

struct row_output {
  std::vector<gpu::sample_result> samples;  // when the row asked to sample: num_sample, in order
  std::vector<float> logits;  // when asked: [n, vocab], n = num_sample (last) or tokens.size()
  // One per score_targets entry >= 0, in position order: token = the target, its raw logprob,
  // the top score_top_n.
  std::vector<gpu::sample_result> scores;
  std::vector<float> hidden;  // when asked (return_hidden): [hidden_size]
};

struct forward_output {
  std::vector<row_output> rows;           // one per input row
};

}  // namespace courier::model
