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
};

struct mamba_shape {
  std::int32_t num_heads = 0;
  std::int32_t head_dim = 0;
  std::int32_t state_size = 0;
  std::int32_t n_groups = 0;  // head h reads group h / (num_heads / n_groups)'s B and C
  float dt_min = 0.0f;        // dt = max(softplus(dt_raw + dt_bias), dt_min)
};

}  // namespace courier::gpu
