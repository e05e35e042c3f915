#pragma once
// What the device's Mamba-2 ops (device::mamba_conv1d, mamba_scan) are told about a ragged
// batch and the mixer's shapes. The math is gpu/sim/sim_mamba.hpp's.
#include <cstdint>

namespace courier::gpu {

// The batch, in device memory: token t's state row token_state[t] (its sequence's: equal for a
// sequence's consecutive tokens, different between sequences) and its position positions[t]; a
// sequence whose first token in the batch is at position 0 starts from a zero state.
struct mamba_batch {
  const std::int32_t* token_state = nullptr;  // [num_tokens]
  const std::int32_t* positions = nullptr;    // [num_tokens]
  std::int32_t num_tokens = 0;
  // Optional (null: none): where save_row[t] >= 0, the state after token t is also written to
  // that state row (a row verifying drafts keeps its state after each position, one of which
  // select_draft_states puts back when the drafts after it were rejected).
  const std::int32_t* save_row = nullptr;  // [num_tokens]
};

// A row that verified drafts, for device::select_draft_states: it fed num_drafts drafts at
// ids[first_draft, +num_drafts) and sampled its positions into sampled[first_sample,
// +num_drafts + 1); its state after position j < num_drafts is in state row save_row + j, after
// its last in `slot`. int32 fields only: the model packs them into its metadata upload.
struct draft_states {
  std::int32_t first_sample = 0;
  std::int32_t first_draft = 0;
  std::int32_t num_drafts = 0;
  std::int32_t save_row = 0;
  std::int32_t slot = 0;
};

// One recurrent-state buffer for select_draft_states: `layers` layers of layer_floats floats,
// each a row of row_floats floats per state row.
struct state_buffer {
  float* base = nullptr;
  std::int64_t row_floats = 0;
  std::int64_t layer_floats = 0;
  std::int32_t layers = 0;
};

struct mamba_shape {
  std::int32_t num_heads = 0;
  std::int32_t head_dim = 0;
  std::int32_t state_size = 0;
  std::int32_t n_groups = 0;  // head h reads group h / (num_heads / n_groups)'s B and C
  float dt_min = 0.0f;        // dt = max(softplus(dt_raw + dt_bias), dt_min)
};

}  // namespace courier::gpu
