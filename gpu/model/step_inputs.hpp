#pragma once
// One step's inputs as host arrays, built from the batch alone: what an eager step packs and
// uploads in one copy, and what a graph step lays out at its fixed offsets. Pure and host-only
// (no device, no model), so it is tested apart (tests/gpu/model/step_inputs_test.cpp).
#include <cstdint>
#include <vector>

#include "gpu/model/forward_batch.hpp"

namespace courier::model {

// One row of a sampling launch: for batch row `row`, its sampled position `index` (counted over
// its num_sample) or, when `score`, its scored position `index` (score_targets').
struct sample_entry {
  std::int32_t row = 0;
  std::int32_t index = 0;
  bool score = false;
};

// What the model's memory plan says about a step.
struct step_geometry {
  std::int32_t block_size = 0;
  std::int32_t table_stride = 0;     // entries a table row of the device's tables holds
  std::int32_t first_draft_row = 0;  // a hybrid's draft state rows follow its others
  bool hybrid = false;
};

struct step_inputs {
  bool lora = false;  // some row runs with an adapter: lora_rows holds each token's slot

  // Per token fed, in row order (T entries each).
  std::vector<std::int32_t> ids;        // a row fed from a slot: its placeholder
  std::vector<std::int32_t> positions;
  std::vector<std::int32_t> slots;      // KV cache slot: block * block_size + offset
  std::vector<std::int32_t> token_seq;  // the token's table row: its row's table_slot
  std::vector<std::int32_t> state_rows;  // hybrid: the row's state row
  std::vector<std::int32_t> save_rows;   // hybrid: the draft row kept after it, or -1
  std::vector<std::int32_t> lora_rows;   // when lora: the row's LoRA slot (-1: none)

  // Per row (S entries).
  std::vector<std::int32_t> kv_len;         // start_pos + tokens fed
  std::vector<std::int64_t> logits_begin;   // its first logits row (-1: none)
  std::int32_t max_kv = 0;                  // the longest kv_len

  // The logits rows (token indices), and the ones sampled or scored (logits row indices), with
  // what each samples; a row's sampled positions come before its scored ones.
  std::vector<std::int32_t> logit_index, sample_index;
  std::vector<sample_entry> entries;

  // Index pairs for the device's copies (gpu::device::copy_tokens):
  std::vector<std::int32_t> feed_src, feed_dst;    // next-token slot -> index in ids
  std::vector<std::int32_t> keep_src, keep_dst;    // sample entry -> next-token slot
  std::vector<std::int32_t> count_src, count_dst;  // sample entry -> penalty list
  // The table entries written to the device's tables: values, 0..n-1, places.
  std::vector<std::int32_t> table_values, table_iota, table_places;
  // A hybrid row verifying k drafts: gpu::draft_states as 5 int32 each.
  std::vector<std::int32_t> draft_checks;

  std::int64_t tokens() const { return static_cast<std::int64_t>(ids.size()); }
  // Whether the sampled positions are the logits rows in order (sampled in place), else they
  // are gathered apart.
  bool samples_in_place() const;
};

// The table entries the rows write to their table rows this step (`stride`: a table row's entries),
// appended to values, iota (0..n-1) and places; returns n.
std::int32_t table_writes(const forward_batch& batch, std::int32_t stride,
                          std::vector<std::int32_t>& values, std::vector<std::int32_t>& iota,
                          std::vector<std::int32_t>& places);

// The inputs of a validated batch (llama_model::validate).
step_inputs build_step_inputs(const forward_batch& batch, const step_geometry& geometry);

}  // namespace courier::model
