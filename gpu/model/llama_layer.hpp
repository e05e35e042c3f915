#pragma once
// Internal to the llama_model sources: one decoder layer's weights on the device, and the
// activation workspace.
// The projections that read the same input are stored fused, so each is one linear:
// qkv = [q_proj; k_proj; v_proj] and gate_up = [gate_proj; up_proj], stacked by rows.
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/device.hpp"
#include "gpu/model/llama.hpp"
#include "gpu/model/lora_adapter.hpp"

namespace courier::model {

// One linear's LoRA slot pool (llama_model::reserve_loras): every slot's A and B, as
// gpu::lora_weights lays them out; `targeted` says which slots' adapters adapt this linear (none:
// the op is skipped).
struct llama_model::lora_pool {
  gpu::device_buffer a, b;
  gpu::lora_weights w;
  std::vector<bool> targeted;
  bool any() const {
    for (bool t : targeted) {
      if (t) return true;
    }
    return false;
  }
};

struct llama_model::layer {
  gpu::device_buffer input_norm, post_norm;  // [H]
  gpu::device_buffer qkv;                    // [NQ + 2 * NK, H]: row blocks q, k, v
  gpu::device_buffer qkv_bias;               // [NQ + 2 * NK]; empty unless cfg_.qkv_bias
  gpu::device_buffer o;                      // [H, NQ]
  gpu::device_buffer q_norm, k_norm;         // [D]; empty unless cfg_.qk_norm
  gpu::device_buffer gate_up;                // [2 * I, H]: row blocks gate, up
  gpu::device_buffer down;                   // [H, I]
  // Hybrid (NemotronH) layers: one block each, normed by input_norm; attention uses qkv and o
  // (no rotary, no q/k norm), an MLP up [I, H] and down, a Mamba-2 mixer the rest.
  layer_kind kind = layer_kind::attention;
  std::int32_t kv_index = -1;     // attention: its layer in the KV cache
  std::int32_t state_index = -1;  // mamba: its conv and SSM states' layer
  gpu::device_buffer up;
  gpu::device_buffer in_proj;      // [gate z | x B C | dt, H]
  gpu::device_buffer conv_w;       // [conv_dim, K] (the checkpoint's [conv_dim, 1, K])
  gpu::device_buffer conv_b;       // [conv_dim]; empty without a conv bias
  gpu::device_buffer A_log, dt_bias, D;  // [heads]
  gpu::device_buffer mixer_norm;   // [heads * head_dim]: the gated RMSNorm's weight
  gpu::device_buffer out_proj;     // [H, heads * head_dim]
  // LoRA pools of the linears this layer has (empty without reserve_loras).
  std::array<lora_pool, num_lora_linears> lora;
};

// Activations for up to `tokens` tokens and `logit_rows` logits rows, and the step's metadata
// (token ids, positions, slots, token -> row, row lengths, block tables, logits and sample
// indices) packed into one int32 buffer, so that a step uploads it in one copy. Invariant: every
// buffer is large enough for the capacity recorded here.
struct llama_model::workspace {
  std::int64_t tokens = 0, logit_rows = 0, seqs = 0;
  // [T, H] x (residual), h (normed), o (attention or MLP out); [T, NQ + 2 * NK] qkv; [T, NQ] q
  // (normed, rotated) and attn; [T, 2 * I] gate_up; [T, I] act.
  gpu::device_buffer x, h, o, qkv, q, attn, gate_up, act;
  gpu::device_buffer meta;
  gpu::device_buffer picked, logits, sample_logits;
  // [R, vocab / ranks] f32: this rank's logits before their all-gather (tensor parallelism).
  gpu::device_buffer local_logits;
  // Hybrid models: [T, in_proj_dim] proj, [T, conv_dim] xbc (the conv's output), [T, heads *
  // head_dim] ssm_y (the scan's) and gated (the gated norm's).
  gpu::device_buffer proj, xbc, ssm_y, gated;
  // [T, n_groups] f32: the gated norm's sums of squares per group, summed over the ranks that
  // share a group (tensor parallelism with fewer Mamba-2 groups than ranks).
  gpu::device_buffer norm_sums;
  // [T, 3 * max_rank] f32: LoRA's intermediate (gpu::device::lora_apply), with a LoRA pool.
  gpu::device_buffer lora_tmp;
  // [P] int32: the token sampled at each sampling row of the step, copied from here to the rows'
  // next-token slots (forward_row::next_slot) in stream order.
  gpu::device_buffer sampled;
  std::uint64_t generation = 0;  // +1 whenever a buffer is reallocated (graphs hold addresses)
};

}  // namespace courier::model
