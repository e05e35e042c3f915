#pragma once
// What the prefix cache did to the blocks it stores, as events for routers outside the scheduler
// (vLLM's KV-cache events, which llm-d's and SGLang's cache-aware routers and Dynamo read): blocks
// stored, with the chain hash of each (block_hash.hpp), the hash of the block before the first
// (none at the start of a prompt) and their tokens; blocks removed; everything cleared. The
// radix tree appends them to a log the scheduler drains after each step
// (radix_tree::record_events); actors/telemetry/kv_event_publisher sends them on a ZeroMQ socket.
#include <cstdint>
#include <optional>
#include <vector>

#include "cache/types.hpp"

namespace courier::cache {

struct cache_event {
  enum class kind : std::uint8_t { stored, removed, cleared };
  kind what = kind::stored;
  std::vector<std::uint64_t> hashes;     // stored, removed: one per block, in prefix order
  std::optional<std::uint64_t> parent;   // stored: the chain hash of the block before the first
  std::vector<token_id> tokens;          // stored: every block's tokens, block after block
  std::uint32_t block_size = 0;          // stored
  std::uint32_t adapter_id = 0;          // stored: the namespace's LoRA adapter (0: the base)
};

using cache_event_log = std::vector<cache_event>;

}  // namespace courier::cache
