#include "gpu/model/step_inputs.hpp"

#include <algorithm>

namespace courier::model {

namespace {

// The row's per-token arrays; a hybrid row verifying drafts keeps its state after each of its
// first k sampled positions (its last is in its slot) in draft rows, put back after sampling.
// Returns the row's first draft row (-1: none).
std::int32_t add_tokens(step_inputs& in, const forward_row& row, const step_geometry& g,
                        std::int32_t& next_draft_row) {
  const auto n = static_cast<std::int32_t>(row.tokens.size());
  const auto first = static_cast<std::int32_t>(in.ids.size());
  if (row.token_slot >= 0) {
    in.feed_src.push_back(row.token_slot);
    in.feed_dst.push_back(first);
  }
  for (std::int32_t i = 0; i < n; ++i) {
    const std::int32_t pos = row.start_pos + i;
    in.ids.push_back(static_cast<std::int32_t>(row.tokens[static_cast<std::size_t>(i)]));
    in.positions.push_back(pos);
    in.slots.push_back(row.table()[static_cast<std::size_t>(pos / g.block_size)] * g.block_size +
                       pos % g.block_size);
    in.token_seq.push_back(row.table_slot);
    if (g.hybrid) in.state_rows.push_back(row.state_slot);
    if (in.lora) in.lora_rows.push_back(row.lora_slot);
  }
  if (!g.hybrid) return -1;
  in.save_rows.resize(in.ids.size(), -1);
  const std::int32_t drafts = row.sample ? row.num_sample - 1 : 0;
  if (drafts <= 0) return -1;
  const std::int32_t draft_row = next_draft_row;
  next_draft_row += drafts;
  for (std::int32_t j = 0; j < drafts; ++j) {
    in.save_rows[static_cast<std::size_t>(first + n - row.num_sample + j)] = draft_row + j;
  }
  return draft_row;
}

// The row's logits rows, and its sampled and scored positions in the order of those rows (a
// position both sampled and scored: the sample first), so that the common step samples its
// logits in place.
void add_logits(step_inputs& in, const forward_row& row, std::int32_t r, std::int32_t first,
                std::int32_t draft_row) {
  const auto n = static_cast<std::int32_t>(row.tokens.size());
  if (row.logits != logits_mode::all && row.logits != logits_mode::last && !row.sample) return;
  const std::int32_t first_logit =
      row.logits == logits_mode::all ? 0 : n - (row.sample ? row.num_sample : 1);
  const auto begin = static_cast<std::int64_t>(in.logit_index.size());
  in.logits_begin[static_cast<std::size_t>(r)] = begin;
  for (std::int32_t i = first_logit; i < n; ++i) in.logit_index.push_back(first + i);
  const std::int32_t drafts = row.sample ? row.num_sample - 1 : 0;
  for (std::int32_t p = first_logit; p < n; ++p) {
    const auto at = static_cast<std::int32_t>(begin + (p - first_logit));
    const auto entry = static_cast<std::int32_t>(in.sample_index.size());
    if (row.sample && p >= n - row.num_sample) {
      if (draft_row >= 0 && p == n - row.num_sample) {  // gpu::draft_states, as 5 int32
        in.draft_checks.insert(in.draft_checks.end(),
                               {entry, first + n - drafts, drafts, draft_row, row.state_slot});
      }
      if (row.next_slot >= 0) {  // one sampled position (validated): its token's slot
        in.keep_src.push_back(entry);
        in.keep_dst.push_back(row.next_slot);
      }
      if (row.penalty_slot >= 0) {  // likewise: its token is counted into the list
        in.count_src.push_back(entry);
        in.count_dst.push_back(row.penalty_slot);
      }
      in.sample_index.push_back(at);
      in.entries.push_back({r, p - (n - row.num_sample), false});
    }
    if (!row.score_targets.empty() && row.score_targets[static_cast<std::size_t>(p)] >= 0) {
      in.sample_index.push_back(at);
      in.entries.push_back({r, p, true});
    }
  }
}

}  // namespace

bool step_inputs::samples_in_place() const {
  if (sample_index.size() != logit_index.size()) return false;
  for (std::size_t i = 0; i < sample_index.size(); ++i) {
    if (sample_index[i] != static_cast<std::int32_t>(i)) return false;
  }
  return true;
}

std::int32_t table_writes(const forward_batch& batch, std::int32_t stride,
                          std::vector<std::int32_t>& values, std::vector<std::int32_t>& iota,
                          std::vector<std::int32_t>& places) {
  for (const forward_row& row : batch.rows) {
    for (std::size_t k = static_cast<std::size_t>(row.table_keep); k < row.table().size(); ++k) {
      iota.push_back(static_cast<std::int32_t>(values.size()));
      values.push_back(row.table()[k]);
      places.push_back(row.table_slot * stride + static_cast<std::int32_t>(k));
    }
  }
  return static_cast<std::int32_t>(values.size());
}

step_inputs build_step_inputs(const forward_batch& batch, const step_geometry& g) {
  step_inputs in;
  for (const forward_row& row : batch.rows) in.lora = in.lora || row.lora_slot >= 0;
  table_writes(batch, g.table_stride, in.table_values, in.table_iota, in.table_places);
  const std::size_t S = batch.rows.size();
  in.logits_begin.assign(S, -1);
  std::int32_t next_draft_row = g.first_draft_row;
  for (std::size_t r = 0; r < S; ++r) {
    const forward_row& row = batch.rows[r];
    const auto ri = static_cast<std::int32_t>(r);
    const auto first = static_cast<std::int32_t>(in.ids.size());
    const std::int32_t draft_row = add_tokens(in, row, g, next_draft_row);
    const std::int32_t kv = row.start_pos + static_cast<std::int32_t>(row.tokens.size());
    in.kv_len.push_back(kv);
    in.max_kv = std::max(in.max_kv, kv);
    add_logits(in, row, ri, first, draft_row);
  }
  return in;
}

}  // namespace courier::model
