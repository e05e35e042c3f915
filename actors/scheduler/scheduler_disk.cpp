// scheduler_core and the KV disk tier: requests whose prompts continue on disk wait for those
// blocks to be read into the host tier before they queue (the reads overlap their wait in the
// queue with other requests' steps: nothing else waits for them), and the batches of reads and
// writes that go to the disk actor.
#include "actors/scheduler/scheduler_core.hpp"

#include <algorithm>

namespace courier::actors {

bool scheduler_core::prefetch(sequence& s) {
  if (!kv_.has_disk() || !kv_.caching() || s.wants_prompt_logprobs()) return false;
  ++s.disk_loads;
  // As admit() will look it up: the device, then the host tier, then here; the last token is
  // always computed.
  const auto last = static_cast<std::int32_t>(s.tokens.size()) - 1;
  const prefix_namespace ns = namespace_of(s);
  std::vector<std::uint64_t> host, disk;
  kv_.tier_continuation(ns, s.tokens, kv_.peek(ns, s.tokens, last), last, host, disk);
  // A hybrid resumes from disk blocks only up to a snapshot of its state kept in host memory
  // (detached): past the deepest one on them, reading would bring back nothing it can use.
  if (ready_.recurrent) disk.resize(static_cast<std::size_t>(kv_.deepest_detached(disk) + 1));
  if (disk.empty()) return false;
  kv_.start_disk_reads(disk);
  std::vector<std::uint64_t> waits;  // the leading blocks whose reads are in flight
  for (const std::uint64_t h : disk) {
    if (!kv_.disk_read_in_flight(h)) break;
    waits.push_back(h);
  }
  if (waits.empty()) return false;
  // Pinned from here (what the host tier has) and again when the reads end (with what they
  // brought): the whole continuation past the device's match is kept until admission.
  s.disk_hashes = host;
  s.disk_hashes.insert(s.disk_hashes.end(), disk.begin(), disk.end());
  s.host_pins = kv_.pin_host(host);
  s.device_pin = kv_.pin(ns, s.tokens, last);  // the head those continue, on the device
  loading_.emplace(s.req.id, std::move(waits));
  s.state = seq_state::loading;
  ++stats_.disk_prefetches;
  return true;
}

std::optional<msg::disk_batch> scheduler_core::take_disk_batch() {
  if (!kv_.has_disk()) return std::nullopt;
  std::vector<msg::disk_op> ops = kv_.take_disk_ops();
  if (ops.empty()) return std::nullopt;
  msg::disk_batch b;
  b.id = next_disk_batch_++;
  b.ops = ops;
  disk_batches_.emplace(b.id, std::move(ops));
  return b;
}

void scheduler_core::on_disk_done(const msg::disk_done& d) {
  const auto it = disk_batches_.find(d.id);
  if (it == disk_batches_.end()) return;  // not a batch in flight
  const std::vector<msg::disk_op> ops = std::move(it->second);
  disk_batches_.erase(it);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    kv_.disk_answered(ops[i], i < d.ok.size() && d.ok[i] != 0);
  }
  // Requests whose reads all ended queue now (a failed read: that part is computed).
  release_loading([&](std::vector<std::uint64_t>& waits) {
    waits.erase(std::remove_if(waits.begin(), waits.end(),
                               [&](std::uint64_t h) { return !kv_.disk_read_in_flight(h); }),
                waits.end());
    return waits.empty();
  });
  report_.changed();
}

void scheduler_core::on_disk_deadline(std::uint64_t id) {
  const auto it = disk_batches_.find(id);
  if (it == disk_batches_.end()) return;  // answered
  std::vector<std::uint64_t> late;
  for (const msg::disk_op& op : it->second) {
    if (!op.write) late.push_back(op.hash);
  }
  std::sort(late.begin(), late.end());
  release_loading([&](const std::vector<std::uint64_t>& waits) {
    return std::any_of(waits.begin(), waits.end(), [&](std::uint64_t h) {
      return std::binary_search(late.begin(), late.end(), h);
    });
  });
  report_.changed();
}

void scheduler_core::release_loading(const std::function<bool(std::vector<std::uint64_t>&)>& done) {
  for (auto l = loading_.begin(); l != loading_.end();) {
    if (!done(l->second)) {
      ++l;
      continue;
    }
    sequence& s = *seqs_.at(l->first);
    s.host_pins = kv_.pin_host(s.disk_hashes);  // what is there, until its admission copies it
    if (!l->second.empty()) s.disk_loads = 2;   // past a deadline: the disk is not asked again
    s.state = seq_state::waiting;
    waiting_.push(s.req.id, s.req.group);
    l = loading_.erase(l);
  }
}

}  // namespace courier::actors
