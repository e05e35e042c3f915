#pragma once
// What device::plan_attention planned a step's attention for, kept by a device so that each
// attention() after it can be checked against it: a layer must not run attention on a plan made
// for another batch (on CUDA it would read a stale tile list and a split-K schedule sized for
// other lengths, silently).
#include <cstdint>

#include "gpu/tensor.hpp"

namespace courier::gpu {

struct planned_attention {
  const std::int32_t* token_seq = nullptr;
  std::int32_t num_tokens = -1;  // -1: nothing planned yet
  std::int32_t num_seqs = 0;
  std::int32_t max_kv_len = 0;
  std::int32_t num_q_heads = 0;
  std::int32_t num_kv_heads = 0;
  std::int32_t head_dim = 0;

  static planned_attention of(const attention_batch& b, std::int32_t num_q_heads,
                              std::int32_t num_kv_heads, std::int32_t head_dim) {
    return {b.token_seq,  b.num_tokens,   b.num_seqs, b.max_kv_len,
            num_q_heads, num_kv_heads, head_dim};
  }

  // nullptr when attention of `b` with q [T, num_q_heads * head_dim] on `cache` may run on this
  // plan, else what differs.
  const char* mismatch(const attention_batch& b, std::int64_t q_cols,
                       const kv_cache_view& cache) const {
    if (num_tokens < 0) return "no plan_attention before it";
    if (b.token_seq != token_seq || b.num_tokens != num_tokens) {
      return "a batch other than the one planned (token_seq or num_tokens differ)";
    }
    if (b.num_seqs > num_seqs || b.max_kv_len > max_kv_len) {
      return "more sequences or a longer context than planned";
    }
    if (cache.num_kv_heads != num_kv_heads || cache.head_dim != head_dim ||
        q_cols != static_cast<std::int64_t>(num_q_heads) * head_dim) {
      return "heads other than those planned";
    }
    return nullptr;
  }
};

}  // namespace courier::gpu
