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
  const auto it = copy_flights_.find(d.batch);
  if (it == copy_flights_.end()) return;
  const copy_flight f = std::move(it->second);  // its holds go at the end of this call
  copy_flights_.erase(it);
  if (!d.ok) ++stats_.copy_batch_failures;
  kv_.spilled_answered(f.holds.written, d.ok);  // written through: may be promoted, or dropped
  const std::int32_t bs = kv_.block_size();
  for (const auto& [id, epoch] : f.seqs) {
    sequence* s = find(id);
    if (!s || s->epoch != epoch || s->copy_batch != d.batch) continue;  // ended, or preempted
    s->copy_batch = 0;
    s->state = seq_state::resuming;
    if (!d.ok) {  // what the copies were to bring is computed instead
      s->num_computed = s->copy_base;
      s->num_in_cache = std::min(s->num_in_cache, s->copy_base);
      s->state_copied = false;  // a hybrid's state too: from position 0 (its copy_base)
      kv_.truncate(s->blocks, (s->copy_base + bs - 1) / bs);
    }
  }
  report_.changed();
}

}  // namespace courier::actors
