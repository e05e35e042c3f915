#pragma once
// The values kv_manager and its tiers (kv_host_tier, kv_disk_tier, kv_snapshots) take and give:
// namespaces, setups, where a prompt resumes, the copies a plan carries, counters.
#include <cstdint>
#include <string>
#include <vector>

#include "actors/scheduler/snapshot_policy.hpp"
#include "cache/block_refs.hpp"
#include "cache/snapshot_index.hpp"
#include "messages/disk.hpp"
#include "messages/messages.hpp"
#include "messages/step.hpp"

namespace courier::actors {

class kv_manager;

// What kv_manager's tier classes (kv_host_tier, kv_disk_tier, kv_snapshots) are: a view of the
// manager whose one state they speak of; kv_manager holds one of each and lends them out.
class kv_part {
 public:
  kv_part(const kv_part&) = delete;
  kv_part& operator=(const kv_part&) = delete;

 protected:
  explicit kv_part(kv_manager& kv) : kv_(kv) {}
  ~kv_part() = default;
  kv_manager& kv_;
};

// Prefix-cache namespace: one never reuses another's blocks.
struct prefix_namespace {
  std::string adapter;
  std::string isolation_key;  // the tenant when cache_isolation is "tenant"
};

// A hybrid model's snapshot rows: device state rows [first_slot, first_slot + num_slots) hold
// snapshots of the recurrent state at stored prefixes (none: num_slots 0).
struct snapshot_setup {
  std::int32_t first_slot = 0;
  std::int32_t num_slots = 0;
  std::int32_t num_host_slots = 0;  // the host tier (0: an evicted snapshot is dropped)
  snapshot_policy policy;
};

// Where a hybrid's sequence can resume: the deepest prefix with both KV blocks and a snapshot.
struct resume_point {
  std::int32_t tokens = 0;  // prefix covered (its blocks matched, its snapshot pinned)
  std::int32_t slot = -1;   // the snapshot's row; -1: none (start from position 0)
  cache::block_id block;    // the snapshot's key (to unpin)
  cache::snapshot_kind kind = cache::snapshot_kind::exact;
  bool spilled = false;            // promoted from the host tier for this lookup
  bool from_host_state = false;    // a detached snapshot's state, copied into the slot
  std::int32_t stored_tokens = 0;  // the stored KV prefix, >= tokens: past it the prompt is new
};

// A hybrid's resume point in the host tiers (find_host_resume): a detached snapshot (pinned
// until unpin_detached) at `tokens`, whose prefix's blocks the device stores up to
// `device_tokens` and the host tier keeps from there (`from_host`, chain hashes in order).
struct host_resume {
  std::int32_t tokens = 0;  // 0: none deeper than the device's
  std::int32_t device_tokens = 0;
  std::int32_t host_row = -1;
  std::uint64_t hash = 0;
  cache::snapshot_kind kind = cache::snapshot_kind::exact;
  std::vector<std::uint64_t> from_host;
};

// A block the host tier took in, for forgetting it if the step that copies it fails.
struct spilled_block {
  std::uint64_t hash = 0;
  std::int32_t host_block = -1;
};

// Copies for the device's copy stream (msg::step_plan::async_copies): back from the host tier
// (promotions, swaps in) and out to it (write-through), with a reference on every block they
// name, device and host, for their batch to hold until the engine says they are done: until then
// no row may use a device block they write or write one they read, and nothing else may touch
// their host blocks.
struct async_copy_batch {
  std::vector<msg::block_copy> copies;
  cache::block_refs device, host;
  std::vector<spilled_block> written;  // host tier entries its copies out write (write-through)
};

// A block a previous run left in the disk tier (cache.disk_tier_persist), its header checked.
struct disk_entry {
  std::int64_t slot = 0;
  std::uint64_t hash = 0;    // the chain hash of the prefix it ends
  std::uint64_t parent = 0;  // the one before it
  std::vector<msg::token_id> tokens;
};

// The KV disk tier behind the host tier (num_slots 0: none).
struct disk_tier_setup {
  std::int64_t num_slots = 0;
  std::vector<disk_entry> restored;
  // Host blocks disk writes may hold at once (0: an eighth of the host tier, at least 1), so
  // the host tier keeps room for spills and reads while writes run.
  std::int32_t max_writes_in_flight = 0;
};

struct disk_counters {
  std::uint64_t written = 0, write_failed = 0;  // blocks
  std::uint64_t read = 0, read_failed = 0;
  std::uint64_t promoted = 0;  // blocks a disk read brought that were copied to the device
  std::uint64_t restored = 0;  // entries a previous run left
};

// A hybrid's snapshot rows and the costs their policy weighs, from the engine's shape, with
// Marconi's FLOPs-per-byte weight `eviction_alpha` (cache.ssm_eviction_alpha); none for a model
// without recurrent state.
snapshot_setup snapshot_setup_for(const msg::engine_ready& ready, double eviction_alpha);

}  // namespace courier::actors
