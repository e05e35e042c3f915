#include "actors/disk/disk_actor.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <functional>
#include <vector>

#include "actors/telemetry/trace.hpp"
#include "base/job_lane.hpp"

namespace courier::actors {

namespace {

struct disk_state {
  disk_setup setup;
  std::vector<std::unique_ptr<storage::disk_staging>> staging;  // one per I/O thread
  // The I/O threads beside the actor's own (cache.disk_tier_io_threads - 1; null: none).
  std::unique_ptr<base::job_lane> helpers;
};

using self_ptr = disk_actor::stateful_pointer<disk_state>;

// One copy; false with the reason when it did not happen (a read then left its host block as
// it was: the scheduler gives that block back unused).
bool run_op(const disk_setup& s, const msg::disk_op& op, storage::disk_staging& staging,
            std::string& error) {
  if (op.host_block < 0 || op.host_block >= s.num_host_blocks || op.slot < 0 ||
      op.slot >= s.file->num_slots()) {
    error = "a copy names host block " + std::to_string(op.host_block) + " and slot " +
            std::to_string(op.slot) + " (out of range)";
    return false;
  }
  const std::size_t at = static_cast<std::size_t>(op.host_block) * s.block_bytes;
  std::vector<void*> parts;
  for (const std::shared_ptr<void>& h : s.hosts) {
    parts.push_back(static_cast<unsigned char*>(h.get()) + at);
  }
  storage::disk_block_key key{op.hash, op.parent, op.tokens};
  return op.write ? s.file->write(op.slot, key,
                                  std::vector<const void*>(parts.begin(), parts.end()), staging,
                                  error)
                  : s.file->read(op.slot, key, parts, staging, error);
}

msg::disk_done run_batch(disk_state& st, const msg::disk_batch& b) {
  msg::disk_done done;
  done.id = b.id;
  done.ok.assign(b.ops.size(), 0);
  std::atomic<std::size_t> next{0};
  std::mutex error_mutex;
  auto worker = [&](storage::disk_staging& staging) {
    for (std::size_t i = next++; i < b.ops.size(); i = next++) {
      std::string error;
      bool ok = false;
      try {
        ok = run_op(st.setup, b.ops[i], staging, error);
      } catch (const std::exception& e) {
        error = e.what();
      }
      done.ok[i] = ok ? 1 : 0;
      if (!ok) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (done.error.empty()) done.error = error;
      }
    }
  };
  const std::size_t n = std::min(st.staging.size(), b.ops.size());
  std::vector<std::function<void()>> jobs;  // the first on the actor's thread
  for (std::size_t t = 0; t < n; ++t) jobs.push_back([&, t] { worker(*st.staging[t]); });
  if (st.helpers) {
    st.helpers->run_all(std::move(jobs));
  } else if (n > 0) {
    jobs[0]();
  }
  return done;
}

disk_actor::behavior_type disk_fn(self_ptr self, disk_setup s) {
  const int threads = std::max(1, s.io_threads);
  for (int t = 0; t < threads; ++t) {
    self->state.staging.push_back(std::make_unique<storage::disk_staging>(s.file->slot_bytes()));
  }
  if (threads > 1) {
    self->state.helpers = std::make_unique<base::job_lane>("courier-disk", threads - 1);
  }
  self->state.setup = std::move(s);
  return {
      [self](const msg::disk_batch& b) {
        telemetry::scoped_span span("disk", "batch");
        if (span.active()) span->rows = static_cast<std::int32_t>(b.ops.size());
        return run_batch(self->state, b);
      },
  };
}

}  // namespace

disk_actor spawn_disk(caf::actor_system& sys, disk_setup setup) {
  return sys.spawn<caf::detached>(disk_fn, std::move(setup));
}

}  // namespace courier::actors
