#pragma once
// The KV disk tier on the scheduler's side: a request whose prompt continues on disk past what
// the device and the host tier hold is "loading" until those blocks are read into host memory
// (the reads overlap its wait with other requests' steps: nothing else waits for them), and the
// batches of reads and writes that go to the disk actor, each answered once (or past its
// deadline for its reads, after which the requests waiting for them go on without them). The
// scheduler core queues the requests this says are ready (scheduler_disk.cpp).
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "actors/scheduler/kv_manager.hpp"
#include "actors/scheduler/sequence.hpp"
#include "messages/disk.hpp"
#include "messages/step.hpp"

namespace courier::actors {

class disk_reads {
 public:
  // A loading request that may queue now; `late`: a read it waited for had not answered by its
  // batch's deadline (the disk is not asked for it again).
  struct ready {
    msg::request_id id = 0;
    bool late = false;
  };

  // `recurrent`: a hybrid model's (it resumes from disk only up to a snapshot kept in host
  // memory). `stats` counts the prefetches; kv and stats outlive this.
  disk_reads(kv_manager& kv, msg::scheduler_stats& stats, bool recurrent);

  // Whether s may load from disk at all: a disk tier, prefix caching, no prompt logprobs. Asked
  // before start, whose namespace costs a lookup and copies.
  bool may_load(const sequence& s) const {
    return kv_.disk().on() && kv_.caching() && !s.wants_prompt_logprobs();
  }
  // The reads s's prompt needs from disk (s may_load), started (its lookup on disk counted),
  // with pins on what they continue (the host tier's blocks and the device's head) until its
  // admission; true: s is loading until they end. False: nothing of it on disk to read.
  bool start(sequence& s, const prefix_namespace& ns);
  // The reads and writes due, as the next batch for the disk actor; nothing when none.
  std::optional<msg::disk_batch> take_batch();
  // A batch answered / past its deadline: the loading requests whose reads all ended, or that
  // waited for one of its late reads, in id order; nothing for a batch not in flight.
  std::optional<std::vector<ready>> answered(const msg::disk_done& d);
  std::optional<std::vector<ready>> past_deadline(std::uint64_t id);
  // A loading request went (cancelled): its reads go on, their blocks are cached.
  void forget(msg::request_id id) { loading_.erase(id); }

  // Each loading request and the chain hashes of the reads it still waits for.
  const std::map<msg::request_id, std::vector<std::uint64_t>>& loading() const { return loading_; }

 private:
  template <class Done>
  std::vector<ready> release(Done done);

  kv_manager& kv_;
  msg::scheduler_stats& stats_;
  bool recurrent_;
  std::map<msg::request_id, std::vector<std::uint64_t>> loading_;
  std::map<std::uint64_t, std::vector<msg::disk_op>> batches_;  // in flight, by batch id
  std::uint64_t next_batch_ = 1;
};

}  // namespace courier::actors
