// scheduler_core::check_invariants: what the core tests check after every plan and result.
#include <algorithm>
#include <stdexcept>
#include <vector>

#include "actors/scheduler/scheduler_core.hpp"

namespace courier::actors {

void scheduler_core::check_invariants() const {
  kv_.check_invariants();
  waiting_.check_invariants();
  const auto steps = static_cast<std::int32_t>(flights_.size());
  for (const auto& [id, s] : seqs_) check_holdings(*s, kv_.block_size(), ready_.recurrent, steps);
  check_queues();
  check_slots();
  check_host_blocks();
  check_steps();
}

// A sequence is in the one queue its state names; a loading one waits for reads in flight; one
// copying in is listed in its batch.
void scheduler_core::check_queues() const {
  const auto& loading = disk_.loading();
  if (loading.size() + waiting_.size() + running_.size() != seqs_.size()) {
    throw std::logic_error("scheduler: a sequence is in none or two of the queues");
  }
  for (const auto& [id, waits] : loading) {
    if (seqs_.at(id)->state != seq_state::loading || waits.empty()) {
      throw std::logic_error("scheduler: a loading sequence is not loading or waits for nothing");
    }
    for (const std::uint64_t h : waits) {
      if (!kv_.disk().disk_read_in_flight(h)) {
        throw std::logic_error("scheduler: a loading sequence waits for no read in flight");
      }
    }
  }
  for (const msg::request_id id : waiting_.ids()) {
    const seq_state st = seqs_.at(id)->state;
    if (st != seq_state::waiting && st != seq_state::swapping_out) {
      throw std::logic_error("scheduler: a queued sequence is not waiting");
    }
  }
  for (const msg::request_id id : running_) {
    const sequence& s = *seqs_.at(id);
    if (!s.running()) throw std::logic_error("scheduler: waiting but running");
    if (s.copy_batch == 0) continue;
    if (!copies_.waits(s.copy_batch, id, s.epoch)) {  // no row before its copies are done
      throw std::logic_error("scheduler: a sequence waiting for copies is in no batch");
    }
  }
}

// Recurrent-state and LoRA slots: each held by the running sequences that need one (a running
// one with an adapter holds the slot holding it), and nothing else holds one.
void scheduler_core::check_slots() const {
  std::vector<std::int32_t> states, loras;
  for (const auto& [id, sp] : seqs_) {
    const sequence& s = *sp;
    if (s.running() && ready_.recurrent) states.push_back(s.recurrent.index());
    const std::int32_t i = s.lora.index();
    if (s.running() && !s.req.adapter.empty()) {
      if (i < 0 || loras_.slots().adapter_of(i) != s.req.adapter) {
        throw std::logic_error("scheduler: a running sequence does not hold its adapter's slot");
      }
    } else if (i >= 0) {
      throw std::logic_error("scheduler: a sequence that is not running holds a LoRA slot");
    }
    if (i >= 0) loras.push_back(i);
  }
  if (ready_.recurrent) states_.check_holders(states);
  loras_.slots().check_holders(loras);
}

// Host blocks and host state rows: each held, by one holder where it must be one.
void scheduler_core::check_host_blocks() const {
  // Host blocks are held by swapped-out sequences, each its computed prefix's, by the host
  // tier's prefix cache, one each, and by disk copies in flight (a write shares its entry's);
  // host state rows by swapped-out hybrids (check_holdings: no other).
  std::int32_t state_rows = 0;
  for (const auto& [id, seq] : seqs_) state_rows += seq->swapped_state >= 0;
  if (state_rows != kv_.snapshots().num_lent_host_state_rows()) {
    throw std::logic_error("scheduler: host state rows are lost or held twice");
  }
  // ... and, with a disk tier, by its copies in flight and by waiting requests' pins on what
  // was read for them: every block in use has a holder.
  std::vector<std::int32_t> held;
  for (const flight& f : flights_) {  // the copies of steps in flight
    for (const cache::block_id b : f.host_holds.ids()) held.push_back(b.value);
  }
  copies_.host_blocks(held);  // and of the copy stream
  std::vector<std::int32_t> swapped_blocks;
  for (const auto& [id, seq] : seqs_) {
    for (const cache::block_id b : seq->swapped.ids()) swapped_blocks.push_back(b.value);
    for (const cache::block_id b : seq->host_pins.ids()) held.push_back(b.value);
  }
  kv_.host().check_host_holders(std::move(held), swapped_blocks);
}

// Snapshot rows, steps in flight, and between steps no block past the computed tokens.
void scheduler_core::check_steps() const {
  if (snapshots_on()) {
    std::vector<const sequence*> running;
    for (const msg::request_id id : running_) running.push_back(seqs_.at(id).get());
    snaps_.check_rows(running);
  }
  if (flights_.size() > (opts_.overlap ? 2u : 1u)) {
    throw std::logic_error("scheduler: more steps in flight than allowed");
  }
  if (!flights_.empty()) return;
  // Between steps a running sequence holds exactly the blocks of its computed tokens: nothing
  // left over from rejected drafts.
  for (msg::request_id id : running_) {
    const sequence& s = *seqs_.at(id);
    const std::int32_t bs = kv_.block_size();
    // (One resuming holds its first chunk's too, taken at its admission.)
    const auto n = static_cast<std::int32_t>(s.blocks.size());
    const std::int32_t need = (s.num_computed + bs - 1) / bs;
    const std::int32_t most = (s.num_computed + opts_.max_batched_tokens + bs - 1) / bs;
    if (s.unpreemptable() ? n < need || n > most : n != need) {
      throw std::logic_error("scheduler: a sequence holds blocks past its computed tokens");
    }
  }
}

}  // namespace courier::actors
