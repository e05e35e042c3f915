#pragma once
// Internal to llama.cpp and llama_weights.cpp: one decoder layer's weights on the device.
// The projections that read the same input are stored fused, so each is one linear:
// qkv = [q_proj; k_proj; v_proj] and gate_up = [gate_proj; up_proj], stacked by rows.
#include "gpu/device.hpp"
#include "gpu/model/llama.hpp"

namespace courier::model {

struct llama_model::layer {
  gpu::device_buffer input_norm, post_norm;  // [H]
  gpu::device_buffer qkv;                    // [NQ + 2 * NK, H]: row blocks q, k, v
  gpu::device_buffer qkv_bias;               // [NQ + 2 * NK]; empty unless cfg_.qkv_bias
  gpu::device_buffer o;                      // [H, NQ]
  gpu::device_buffer q_norm, k_norm;         // [D]; empty unless cfg_.qk_norm
  gpu::device_buffer gate_up;                // [2 * I, H]: row blocks gate, up
  gpu::device_buffer down;                   // [H, I]
};

}  // namespace courier::model
