#include "actors/scheduler/disk_reads.hpp"

#include <algorithm>

namespace courier::actors {

disk_reads::disk_reads(kv_manager& kv, msg::scheduler_stats& stats, bool recurrent)
    : kv_(kv), stats_(stats), recurrent_(recurrent) {}

bool disk_reads::start(sequence& s, const prefix_namespace& ns) {
  ++s.disk_loads;
  // As admission will look it up: the device, then the host tier, then here; the last token is
  // always computed.
  const auto last = static_cast<std::int32_t>(s.tokens.size()) - 1;
  std::vector<std::uint64_t> host, disk;
  kv_.disk().tier_continuation(ns, s.tokens, kv_.peek(ns, s.tokens, last), last, host, disk);
  // A hybrid resumes from disk blocks only up to a snapshot of its state kept in host memory
  // (detached): past the deepest one on them, reading would bring back nothing it can use.
  if (recurrent_) disk.resize(static_cast<std::size_t>(kv_.snapshots().deepest_detached(disk) + 1));
  if (disk.empty()) return false;
  kv_.disk().start_disk_reads(disk);
  std::vector<std::uint64_t> waits;  // the leading blocks whose reads are in flight
  for (const std::uint64_t h : disk) {
    if (!kv_.disk().disk_read_in_flight(h)) break;
    waits.push_back(h);
  }
  if (waits.empty()) return false;
  // Pinned from here (what the host tier has) and again when the reads end (with what they
  // brought): the whole continuation past the device's match is kept until admission.
  s.disk_hashes = host;
  s.disk_hashes.insert(s.disk_hashes.end(), disk.begin(), disk.end());
  s.host_pins = kv_.host().pin_host(host);
  s.device_pin = kv_.pin(ns, s.tokens, last);  // the head those continue, on the device
  loading_.emplace(s.req.id, std::move(waits));
  ++stats_.disk_prefetches;
  return true;
}

std::optional<msg::disk_batch> disk_reads::take_batch() {
  if (!kv_.disk().on()) return std::nullopt;
  std::vector<msg::disk_op> ops = kv_.disk().take_disk_ops();
  if (ops.empty()) return std::nullopt;
  msg::disk_batch b;
  b.id = next_batch_++;
  b.ops = ops;
  batches_.emplace(b.id, std::move(ops));
  return b;
}

// The loading requests `done` says may go (it may update their waits), no longer loading.
template <class Done>
std::vector<disk_reads::ready> disk_reads::release(Done done) {
  std::vector<ready> out;
  for (auto l = loading_.begin(); l != loading_.end();) {
    if (!done(l->second)) {
      ++l;
      continue;
    }
    out.push_back({l->first, !l->second.empty()});
    l = loading_.erase(l);
  }
  return out;
}

std::optional<std::vector<disk_reads::ready>> disk_reads::answered(const msg::disk_done& d) {
  const auto it = batches_.find(d.id);
  if (it == batches_.end()) return std::nullopt;  // not a batch in flight
  const std::vector<msg::disk_op> ops = std::move(it->second);
  batches_.erase(it);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    kv_.disk().disk_answered(ops[i], i < d.ok.size() && d.ok[i] != 0);
  }
  // Requests whose reads all ended go on (a failed read: that part is computed).
  return release([&](std::vector<std::uint64_t>& waits) {
    waits.erase(std::remove_if(waits.begin(), waits.end(),
                               [&](std::uint64_t h) { return !kv_.disk().disk_read_in_flight(h); }),
                waits.end());
    return waits.empty();
  });
}

std::optional<std::vector<disk_reads::ready>> disk_reads::past_deadline(std::uint64_t id) {
  const auto it = batches_.find(id);
  if (it == batches_.end()) return std::nullopt;  // answered
  std::vector<std::uint64_t> late;
  for (const msg::disk_op& op : it->second) {
    if (!op.write) late.push_back(op.hash);
  }
  std::sort(late.begin(), late.end());
  return release([&](const std::vector<std::uint64_t>& waits) {
    return std::any_of(waits.begin(), waits.end(), [&](std::uint64_t h) {
      return std::binary_search(late.begin(), late.end(), h);
    });
  });
}

}  // namespace courier::actors
