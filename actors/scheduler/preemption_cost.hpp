#pragma once
// What preempting a sequence costs, estimated from the engine's shape (msg::engine_ready), for
// cache.preemption = auto: swapping copies its KV blocks (and a hybrid's recurrent state) out
// to the host tier and back at host_bytes_per_s; recomputing takes its tokens past what the
// caches keep through the model again: linear_flops_per_token each (about 2 x parameters) and
// attention_flops_per_pair for each (query, key) pair of the causal attention over them, at
// device_flops. A pure function: the core chooses (scheduler_preempt.cpp).
#include <algorithm>
#include <cstdint>

#include "messages/step.hpp"

namespace courier::actors {

struct preemption_cost {
  double swap_s = 0;       // out and back
  double recompute_s = 0;  // tokens (cached, computed] again
};

// A sequence with `computed` tokens of KV in `blocks` blocks, `cached` of them kept by the
// caches (for a hybrid: the deepest snapshot of its prefix, where recomputing resumes).
inline preemption_cost estimate_preemption(const msg::engine_ready& ready, std::int32_t computed,
                                           std::int32_t cached, std::int32_t blocks) {
  preemption_cost c;
  const double state = ready.recurrent ? ready.snapshot_bytes : 0.0;
  c.swap_s = 2.0 * (static_cast<double>(blocks) * ready.kv_block_bytes + state) /
             std::max(ready.host_bytes_per_s, 1.0);
  const double done = computed, kept = cached;
  const double pairs = (done * (done + 1) - kept * (kept + 1)) / 2;  // (query, key) pairs
  c.recompute_s =
      ((done - kept) * ready.linear_flops_per_token + pairs * ready.attention_flops_per_pair) /
      std::max(ready.device_flops, 1.0);
  return c;
}

}  // namespace courier::actors
