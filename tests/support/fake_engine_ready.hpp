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

}  // namespace courier::test
