#pragma once
// The disk actor: the KV disk tier's reads and writes, off the scheduler's and the engine's
// threads (a detached actor: its blocking I/O takes no CAF worker). It copies between the
// engine's host tier memory and the file's slots, io_threads at a time; the scheduler decides
// what and holds the host blocks a batch names until the answer.
#include <caf/actor_system.hpp>

#include <cstddef>
#include <memory>
#include <vector>

#include "actors/disk/disk_handle.hpp"
#include "storage/disk_block_file.hpp"

namespace courier::actors {

struct disk_setup {
  std::shared_ptr<storage::disk_block_file> file;
  // The host tier's memory (model::kv_cache::host_memory): block b at b * block_bytes. Shared:
  // it outlives the actor's last copy. Under tensor parallelism every rank's, in rank order: a
  // slot holds each rank's host block one after the other.
  std::vector<std::shared_ptr<void>> hosts;
  std::size_t block_bytes = 0;  // one rank's host block
  std::int32_t num_host_blocks = 0;
  int io_threads = 4;  // copies of one batch at once (the disk's queue depth)
};

disk_actor spawn_disk(caf::actor_system& sys, disk_setup setup);

}  // namespace courier::actors
