// scheduler_core and the KV disk tier (disk_reads): a request whose prompt continues on disk
// loads before it queues, and queues once its reads end or are late.
#include "actors/scheduler/scheduler_core.hpp"

namespace courier::actors {

bool scheduler_core::prefetch(sequence& s) {
  if (!disk_.may_load(s) || !disk_.start(s, namespace_of(s))) return false;
  s.state = seq_state::loading;
  return true;
}

std::optional<msg::disk_batch> scheduler_core::take_disk_batch() { return disk_.take_batch(); }

void scheduler_core::on_disk_done(const msg::disk_done& d) {
  if (auto ready = disk_.answered(d)) {
    queue_loaded(*ready);
    report_.changed();
  }
}

void scheduler_core::on_disk_deadline(std::uint64_t id) {
  if (auto ready = disk_.past_deadline(id)) {
    queue_loaded(*ready);
    report_.changed();
  }
}

void scheduler_core::queue_loaded(const std::vector<disk_reads::ready>& ready) {
  for (const disk_reads::ready& r : ready) {
    sequence& s = *seqs_.at(r.id);
    s.host_pins =
        kv_.host().pin_host(s.disk_hashes);  // what is there, until its admission copies it
    if (r.late) s.disk_loads = 2;  // past a deadline: the disk is not asked again
    s.state = seq_state::waiting;
    waiting_.push(s.req.id, s.req.group);
  }
}

}  // namespace courier::actors
