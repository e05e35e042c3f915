#pragma once
// The scheduler <-> disk actor protocol (the KV disk tier): a batch of block copies between host
// tier blocks and disk slots, answered once with each copy's outcome. The scheduler holds every
// host block a batch names until its answer comes, so nothing else reads or writes them
// meanwhile.
#include <cstdint>
#include <string>
#include <vector>

#include "messages/messages.hpp"

namespace courier::msg {

struct disk_op {
  bool write = false;            // host block -> disk slot; else disk slot -> host block
  std::int32_t host_block = -1;  // in the engine's host tier
  std::int64_t slot = -1;        // in the disk tier's file
  std::uint64_t hash = 0;        // the prefix's chain hash (written in the slot, checked on read)
  std::uint64_t parent = 0;      // the chain hash before the block
  std::vector<token_id> tokens;  // the block's tokens (likewise)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, disk_op& x) {
  return f(caf::meta::type_name("disk_op"), x.write, x.host_block, x.slot, x.hash, x.parent,
           x.tokens);
}

struct disk_batch {
  std::uint64_t id = 0;
  std::vector<disk_op> ops;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, disk_batch& x) {
  return f(caf::meta::type_name("disk_batch"), x.id, x.ops);
}

struct disk_done {
  std::uint64_t id = 0;          // the batch's
  std::vector<std::uint8_t> ok;  // per op: 1 done (a read: the block is in its host block, checked)
  std::string error;             // the first failure's reason (for the log), empty when none
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, disk_done& x) {
  return f(caf::meta::type_name("disk_done"), x.id, x.ok, x.error);
}

// scheduler -> itself: the reads of batch `id` have taken cache.disk_tier_read_timeout_ms; the
// requests waiting for them queue without them (the reads go on; their blocks are kept when
// they end).
struct disk_deadline {
  std::uint64_t id = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, disk_deadline& x) {
  return f(caf::meta::type_name("disk_deadline"), x.id);
}

}  // namespace courier::msg
