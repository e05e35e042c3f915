#pragma once
// What the prefix cache did to the blocks it stores, as events for routers outside the scheduler
// (vLLM's KV-cache events, which llm-d's and SGLang's cache-aware routers and Dynamo read): blocks
// stored, with the chain hash of each (block_hash.hpp), the hash of the block before the first
// (none at the start of a prompt) and their tokens; blocks removed; everything cleared. The
// radix tree appends them to a log the scheduler drains after each step
// (radix_tree::record_events); actors/telemetry/kv_event_publisher sends them on a ZeroMQ socket.
//
// The KV host and disk tiers behind the device record theirs in the same log, under their own
// medium, as vLLM's offloading connector does: a block stored there (its bytes in host memory,
// or written to disk) or removed, by hash only (no parent, tokens or adapter: the device's
// event for the same hash named them). A block is stored in each medium at most once until
// removed from it.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "cache/types.hpp"

namespace courier::cache {

// Where a block's copy is: the device's prefix cache, the host tier, the disk tier (vLLM's
// "GPU" and "CPU"; "DISK").
enum class cache_medium : std::uint8_t { gpu, cpu, disk };

struct cache_event {
  enum class kind : std::uint8_t { stored, removed, cleared };
  kind what = kind::stored;
  cache_medium medium = cache_medium::gpu;  // stored, removed
  std::vector<std::uint64_t> hashes;     // stored, removed: one per block, in prefix order
  std::optional<std::uint64_t> parent;   // stored: the chain hash of the block before the first
  std::vector<token_id> tokens;          // stored: every block's tokens, block after block
  std::uint32_t block_size = 0;          // stored
  std::uint32_t adapter_id = 0;          // stored: the namespace's LoRA adapter (0: the base)
};

using cache_event_log = std::vector<cache_event>;

// Appends a tier's stored or removed event for one block to `log` (null: nothing), extending the
// last event when it is of the same kind and medium, so that a step's evictions are one event.
inline void append_tier_event(cache_event_log* log, cache_event::kind what, cache_medium medium,
                              std::uint64_t hash, std::uint32_t block_size) {
  if (!log) return;
  if (!log->empty() && log->back().what == what && log->back().medium == medium &&
      medium != cache_medium::gpu) {
    log->back().hashes.push_back(hash);
    return;
  }
  cache_event e;
  e.what = what;
  e.medium = medium;
  e.hashes.push_back(hash);
  if (what == cache_event::kind::stored) e.block_size = block_size;
  log->push_back(std::move(e));
}

}  // namespace courier::cache
