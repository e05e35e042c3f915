#pragma once
// kv_manager's KV disk tier behind the host tier (kv_manager::disk()): writes of host tier
// entries, reads back into host blocks, and the ops they give the disk actor. Its state is
// kv_manager's (kv_tiers.cpp); this is the part of the surface that speaks of it.
#include <cstdint>
#include <optional>
#include <vector>

#include "actors/scheduler/kv_types.hpp"
#include "cache/block_refs.hpp"
#include "messages/disk.hpp"

namespace courier::actors {

class kv_disk_tier : public kv_part {
 public:
  explicit kv_disk_tier(kv_manager& kv) : kv_part(kv) {}

  // The disk tier. Host tier entries whose bytes are in host memory are written to disk (write-
  // through, oldest first, at most max_writes_in_flight at once), so an entry the host tier
  // evicts is still found on disk. tier_continuation: in one walk of the prompt, what
  // host_continuation gives (`host`), then the chain hashes past it that the disk keeps or is
  // reading (`disk`), in order, within max_tokens. start_disk_reads:
  // reads of those (from the first) into host blocks, for as many as can be had, each once
  // (a read already in flight is not started again); their host blocks are held until
  // disk_answered, when a read's block joins the host tier (found by host_continuation from
  // then on). take_disk_ops: the reads started and the writes due, for one batch to the disk
  // actor. disk_answered: each op's outcome (a failed one's entry is dropped, never served).
  bool on() const;  // there is a disk tier
  void tier_continuation(const prefix_namespace& ns, const std::vector<msg::token_id>& tokens,
                         std::int32_t matched_tokens, std::int32_t max_tokens,
                         std::vector<std::uint64_t>& host, std::vector<std::uint64_t>& disk);
  std::int32_t start_disk_reads(const std::vector<std::uint64_t>& hashes);
  bool disk_read_in_flight(std::uint64_t hash) const;
  std::vector<msg::disk_op> take_disk_ops();
  void disk_answered(const msg::disk_op& op, bool ok);
  const disk_counters& stats() const;

};

}  // namespace courier::actors
