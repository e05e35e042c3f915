#pragma once
// A step between its plan and the engine's answer, as the scheduler core remembers it: what
// each row fed (to settle the row when the answer comes), what its copies and slot loads hold,
// and what the answered step reports (its summary for telemetry, its rows for the observer).
// At most one flight, or two with scheduler_options::overlap, oldest first: the engine answers
// in step order.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "actors/scheduler/kv_manager.hpp"
#include "cache/block_refs.hpp"
#include "cache/shared_lookup_cache.hpp"
#include "messages/step.hpp"
#include "messages/telemetry.hpp"

namespace courier::actors {

// Whoever watches the core's steps and requests: the actor's trace (scheduler_actor.cpp). The
// core records no trace itself; it calls this synchronously, from on_result (each row of the
// step just answered) and wherever a request ends.
class scheduler_observer {
 public:
  struct row {
    msg::request_id seq = 0;
    std::int32_t prefill_tokens = 0;  // 0 for a decode row
    bool decode = false;
    std::int32_t drafts = 0;
    std::int32_t accepted = -1;  // drafts that stood; -1: no drafts, or the step failed
  };
  virtual ~scheduler_observer() = default;
  virtual bool wants_rows() const = 0;  // false: row_done is not called (nothing is built)
  virtual void row_done(std::uint64_t step, std::int64_t sent_ns, const row& r) = 0;
  virtual void request_ended(msg::request_id id) = 0;
};

// What one row of a plan feeds, for the answer: its tokens (drafts included), whether it
// samples, decodes, verifies drafts (and from where they came), the sequence's epoch when
// planned (a preemption since voids the row), the snapshot row it writes (hybrid prefix
// caching; -1: none) and whether it restores the sequence's pinned snapshot.
struct fed_row {
  msg::request_id seq = 0;
  std::int32_t num_tokens = 0;
  bool sample = false;
  bool decode = false;
  std::int32_t num_drafts = 0;
  cache::proposal_source source = cache::proposal_source::none;
  std::uint32_t epoch = 0;
  std::int32_t snapshot = -1;
  bool restores = false;
};

struct flight {
  std::uint64_t step = 0;
  std::int64_t sent_ns = 0;
  std::vector<fed_row> rows;
  bool copies = false;                       // the plan carried state copies (spills, promotions)
  std::vector<msg::request_id> swapped_out;  // sequences whose swap-out copies it carried
  std::vector<spilled_block> spilled;        // blocks its copies put in the host tier
  cache::block_refs host_holds;              // the host blocks its copies name, until it answers
  std::vector<msg::lora_load> lora_loads;    // the adapters it loads into slots
  std::vector<spilled_block> detached;       // snapshots its state copies detached to host rows

  // Its prefill tokens and decode rows (the "plan" span's mix).
  void mix(std::int32_t& prefill_tokens, std::int32_t& decode_rows) const;
};

// Copies back from the host tier in flight on the device's copy stream (msg::step_plan's
// copy_batch, answered by copies_done): what a batch holds until then, and the sequences (with
// their epochs) waiting for it. Batch ids count from 1; 0 is none.
struct copy_batch {
  async_copy_batch holds;
  std::vector<std::pair<msg::request_id, std::uint32_t>> seqs;
};

class copy_batches {
 public:
  // The batch the next plan's copies go in (sequences admitted with copies back name it).
  std::uint64_t next() const { return next_; }
  // The next plan carries b: its id (next(), which moves on).
  std::uint64_t open(copy_batch b) {
    in_flight_.emplace(next_, std::move(b));
    return next_++;
  }
  // Batch `id` answered: what it held and who waited (nothing: not in flight).
  std::optional<copy_batch> close(std::uint64_t id);
  // Whether sequence `seq` at `epoch` waits for batch `id` (invariant checks).
  bool waits(std::uint64_t id, msg::request_id seq, std::uint32_t epoch) const;
  // The host blocks the batches in flight hold, appended (invariant checks).
  void host_blocks(std::vector<std::int32_t>& out) const;
  std::int32_t size() const { return static_cast<std::int32_t>(in_flight_.size()); }

 private:
  std::map<std::uint64_t, copy_batch> in_flight_;
  std::uint64_t next_ = 1;
};

// The answered step's summary: its rows, prefill tokens, decode rows and drafts, the engine's
// forward time, and its duration from `from_ns` (when it was sent, or when the step before it
// was answered if that is later: a step planned ahead waits behind it) to `now_ns`.
msg::step_summary step_summary_of(const flight& f, const msg::step_result& r, std::int64_t from_ns,
                                  std::int64_t now_ns);

// Row i of the answered step for the observer: how many of its drafts stood when the step
// answered every row (-1 otherwise, and for a row without drafts).
scheduler_observer::row observed_row(const flight& f, const msg::step_result& r, std::size_t i);

}  // namespace courier::actors
