// scheduler_core and the device's copy stream: a request admitted with blocks copied back from
// the host tier (promoted prefix blocks, or its own swapped-out KV) holds them from its admission
// but gets no row until the engine says the copies are done; meanwhile the other requests' steps
// run beside them. Blocks written through to the host tier count as copied once their batch
// answers.
#include <algorithm>
#include <utility>

#include "actors/scheduler/scheduler_core.hpp"

namespace courier::actors {

void scheduler_core::on_copies_done(const msg::copies_done& d) {
  std::optional<copy_batch> done = copies_.close(d.batch);  // its holds go at the end of this call
  if (!done) return;
  const copy_batch& f = *done;
  if (!d.ok) ++stats_.copy_batch_failures;
  kv_.host().spilled_answered(f.holds.written,
                              d.ok);  // written through: may be promoted, or dropped
  const std::int32_t bs = kv_.block_size();
  for (const auto& [id, epoch] : f.seqs) {
    sequence* s = find(id);
    if (!s || s->epoch != epoch || s->copy_batch != d.batch) continue;  // ended, or preempted
    s->copied_in(d.ok);
    if (!d.ok) kv_.truncate(s->blocks, (s->copy_base + bs - 1) / bs);
  }
  report_.changed();
}

}  // namespace courier::actors
