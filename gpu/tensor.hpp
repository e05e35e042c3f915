#pragma once
// Views over memory that the ops of a device read and write. They borrow; they never own.
#include <cstdint>
#include <vector>

#include "gpu/dtype.hpp"

namespace courier::gpu {

// A 2-D row-major view of device memory: rows x cols elements of `type`, rows contiguous with a
// stride of `cols`. A vector is a 1 x n view.
struct tensor_view {
  void* data = nullptr;
  dtype type = dtype::f32;
  std::int64_t rows = 0;
  std::int64_t cols = 0;

  std::int64_t numel() const { return rows * cols; }
  std::size_t size_bytes() const { return static_cast<std::size_t>(numel()) * dtype_size(type); }
  // Rows [first, first + n) of this view.
  tensor_view row_slice(std::int64_t first, std::int64_t n) const {
    return {static_cast<char*>(data) + first * cols * static_cast<std::int64_t>(dtype_size(type)),
            type, n, cols};
  }
  template <class T>
  T* as() const { return static_cast<T*>(data); }
};

// A tensor as stored in a host file (e.g. a memory-mapped safetensors): borrowed bytes.
struct host_tensor {
  const void* data = nullptr;
  dtype type = dtype::f32;
  std::vector<std::int64_t> shape;  // outermost first, as in the file
  std::size_t size_bytes = 0;

  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
};

// One linear's LoRA weights in a pool of `slots` adapters (device::lora_apply; slot s holds one
// adapter or zeros). The linear's N output columns are cut into `parts` (1 to 3: a fused q/k/v
// or gate/up projection), part p being the columns [p ? part_end[p - 1] : 0, part_end[p]), each
// with its own A and B of rank `rank` (zero-padded past an adapter's own rank):
//   a [slots * parts * rank, K]: slot s, part p's A at rows (s * parts + p) * rank;
//   b [slots * N, rank]: slot s's B at rows s * N, one row per output column, the adapter's
//   scale (lora_alpha / r, or / sqrt(r) with rsLoRA) folded in.
// Weights have the device's weight dtype.
struct lora_weights {
  tensor_view a, b;
  std::int32_t slots = 0;
  std::int32_t parts = 1;
  std::int32_t rank = 0;
  std::int64_t part_end[3] = {0, 0, 0};
};

// One layer's paged KV cache: K and V each [num_blocks, block_size, num_kv_heads, head_dim].
// Block b, slot s of a sequence whose block table entry i is b holds token i * block_size + s.
struct kv_cache_view {
  void* k = nullptr;
  void* v = nullptr;
  dtype type = dtype::f32;
  std::int32_t num_blocks = 0;
  std::int32_t block_size = 16;
  std::int32_t num_kv_heads = 0;
  std::int32_t head_dim = 0;
};

// The ragged batch as attention sees it, in device memory. Token t belongs to sequence
// token_seq[t] and sits at absolute position positions[t]; it attends causally to that
// sequence's cached positions [0, positions[t]] through the sequence's block table.
// Invariants: every slot a token reads was written this step or an earlier one.
struct attention_batch {
  // [num_tokens]: each token's row of block_tables (its sequence's), equal for the consecutive
  // tokens of one sequence and different between sequences.
  const std::int32_t* token_seq = nullptr;
  const std::int32_t* positions = nullptr;     // [num_tokens]
  const std::int32_t* slot_mapping = nullptr;  // [num_tokens] block * block_size + offset
  const std::int32_t* seq_kv_len = nullptr;    // [num_seqs] cached tokens after this step
  // [rows, max_blocks_per_seq]: the batch's own (rows = num_seqs) or tables kept on the device
  // across steps (rows = the model's table rows), which token_seq indexes.
  const std::int32_t* block_tables = nullptr;
  std::int32_t num_tokens = 0;
  std::int32_t num_seqs = 0;
  std::int32_t max_blocks_per_seq = 0;
  std::int32_t block_size = 16;
  std::int32_t max_kv_len = 0;                 // max over seq_kv_len, for planning splits
};

}  // namespace courier::gpu
