#pragma once
// What a fake engine reports at start, for the scheduler's policy tests: `blocks` KV blocks of 16
// tokens, a 1000-token vocabulary whose EOS is 999, and the model name "fake".
#include <cstdint>

#include "messages/step.hpp"

namespace courier::test {

inline msg::engine_ready fake_engine_ready(std::int32_t blocks, std::int64_t max_len = 4096) {
  msg::engine_ready r;
  r.num_kv_blocks = blocks;
  r.block_size = 16;
  r.vocab_size = 1000;
  r.max_model_len = max_len;
  r.eos_token_ids = {999};
  r.model_name = "fake";
  return r;
}

// A hybrid's: `state_slots` sequences at once, `snapshot_slots` snapshot rows and `host_slots`
// more in host memory, costs under which recomputing a token takes as long as copying a
// snapshot (so spills happen).
inline msg::engine_ready fake_hybrid_ready(std::int32_t blocks, std::int32_t state_slots,
                                           std::int32_t snapshot_slots,
                                           std::int32_t host_slots = 0) {
  msg::engine_ready r = fake_engine_ready(blocks);
  r.recurrent = true;
  r.state_slots = state_slots;
  r.snapshot_slots = snapshot_slots;
  r.host_snapshot_slots = host_slots;
  r.device_flops = 1e12;
  r.host_bytes_per_s = 1e9;
  r.snapshot_bytes = 1 << 20;
  r.kv_bytes_per_token = 1024;
  r.linear_flops_per_token = 1e9;
  r.attention_flops_per_pair = 1e5;
  return r;
}

}  // namespace courier::test
