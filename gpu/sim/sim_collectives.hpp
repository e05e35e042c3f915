#pragma once
// Tensor parallelism's collectives for sim devices that are threads of one process: rank r's
// end of a host_collectives (gpu::collectives over host memory, which is the sim's device
// memory). Each call blocks until every rank has made it, on the rank's own thread, which is
// where the sim runs its ops; a recorded graph (recording_device) replays them like any op.
#include <memory>
#include <vector>

#include "gpu/collectives.hpp"

namespace courier::gpu::sim {

// The `size` ends of one new group, rank r's at r: join rank r's device to it
// (device::join_group). Throws std::invalid_argument for a size under 1.
std::vector<std::shared_ptr<collectives>> make_thread_group(std::int32_t size);

}  // namespace courier::gpu::sim
