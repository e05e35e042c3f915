#pragma once
// The disk actor's typed handle and nothing else: what the scheduler includes to send the KV
// disk tier's copies, without the file or the I/O behind them (disk_actor.hpp).
#include <caf/typed_actor.hpp>

#include "messages/type_ids.hpp"

namespace courier::actors {

using disk_actor = caf::typed_actor<
    // Copies between host tier blocks and disk slots, in parallel; one answer when all ended.
    caf::replies_to<msg::disk_batch>::with<msg::disk_done>>;

}  // namespace courier::actors
