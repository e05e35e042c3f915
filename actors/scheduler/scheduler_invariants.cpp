// scheduler_core::check_invariants: what the core tests check after every plan and result.
#include <algorithm>
#include <stdexcept>
#include <unordered_set>
#include <vector>

#include "actors/scheduler/scheduler_core.hpp"

namespace courier::actors {

void scheduler_core::check_invariants() const {
  kv_.check_invariants();
  waiting_.check_invariants();
  check_queues();
  check_slots();
  check_host_blocks();
  check_rows();
  check_steps();
}

// A sequence is in one queue; a loading one holds nothing and waits for reads in flight; a
// running one is not waiting, its copies listed, its blocks covering its KV.
void scheduler_core::check_queues() const {
  const auto& loading = disk_.loading();
  if (loading.size() + waiting_.size() + running_.size() != seqs_.size()) {
    throw std::logic_error("scheduler: a sequence is in none or two of the queues");
  }
  for (const auto& [id, waits] : loading) {  // loading: holds nothing, waits for reads
    const sequence& s = *seqs_.at(id);
    if (s.state != seq_state::loading || !s.blocks.empty() || !s.swapped.empty() ||
        waits.empty()) {
      throw std::logic_error("scheduler: a loading sequence holds blocks or waits for nothing");
    }
    for (const std::uint64_t h : waits) {
      if (!kv_.disk_read_in_flight(h)) {
        throw std::logic_error("scheduler: a loading sequence waits for no read in flight");
      }
    }
  }
  for (msg::request_id id : running_) {
    const sequence& s = *seqs_.at(id);
    if (!s.running()) throw std::logic_error("scheduler: waiting but running");
    if ((s.state == seq_state::copying_in) != (s.copy_batch != 0)) {
      throw std::logic_error("scheduler: a sequence copies in without a batch, or the reverse");
    }
    if (s.copy_batch != 0) {  // waiting for its copies back: no row before they are done
      const auto f = copy_flights_.find(s.copy_batch);
      const bool listed =
          f != copy_flights_.end() &&
          std::find(f->second.seqs.begin(), f->second.seqs.end(),
                    std::make_pair(id, s.epoch)) != f->second.seqs.end();
      if (!listed || s.num_in_flight != 0 || s.samples_in_flight != 0) {
        throw std::logic_error("scheduler: a sequence waiting for copies has rows or no batch");
      }
    }
    const auto covered = static_cast<std::int64_t>(s.blocks.size()) * kv_.block_size();
    if (covered < s.num_computed) throw std::logic_error("scheduler: blocks do not cover KV");
  }
}

// Recurrent-state and LoRA slots: each held by the running sequences that need one.
void scheduler_core::check_slots() const {
  if (ready_.recurrent) {  // each running sequence holds one slot, each slot one holder at most
    std::vector<char> held(static_cast<std::size_t>(states_.capacity()), 0);
    for (msg::request_id id : running_) {
      const std::int32_t i = seqs_.at(id)->recurrent.index();
      if (i < 0 || i >= states_.capacity() || held[static_cast<std::size_t>(i)]++) {
        throw std::logic_error(
            "scheduler: a running sequence holds no state slot, or a shared one");
      }
    }
    if (states_.num_free() + static_cast<std::int32_t>(running_.size()) != states_.capacity()) {
      throw std::logic_error("scheduler: state slots are lost or held twice");
    }
  }
  // LoRA: each running sequence with an adapter holds the slot holding it, and a slot's
  // references are exactly its holders; nothing else holds one.
  std::vector<std::int32_t> lora_refs(static_cast<std::size_t>(loras_.slots().capacity()), 0);
  for (const auto& [id, sp] : seqs_) {
    const sequence& s = *sp;
    const bool running = std::find(running_.begin(), running_.end(), id) != running_.end();
    const std::int32_t i = s.lora.index();
    if (running && !s.req.adapter.empty()) {
      if (i < 0 || loras_.slots().adapter_of(i) != s.req.adapter) {
        throw std::logic_error("scheduler: a running sequence does not hold its adapter's slot");
      }
    } else if (i >= 0) {
      throw std::logic_error("scheduler: a sequence that is not running holds a LoRA slot");
    }
    if (i >= 0) ++lora_refs[static_cast<std::size_t>(i)];
  }
  for (std::int32_t i = 0; i < loras_.slots().capacity(); ++i) {
    if (loras_.slots().refs(i) != lora_refs[static_cast<std::size_t>(i)]) {
      throw std::logic_error("scheduler: LoRA slot references are lost or counted twice");
    }
  }
}

// Host blocks and host state rows: each held, by one holder where it must be one.
void scheduler_core::check_host_blocks() const {
  // Host blocks are held by swapped-out sequences, each its computed prefix's, by the host
  // tier's prefix cache, one each, and by disk copies in flight (a write shares its entry's).
  std::int32_t swapped = 0;
  for (msg::request_id id : running_) {
    if (!seqs_.at(id)->swapped.empty()) {
      throw std::logic_error("scheduler: a running sequence holds host blocks");
    }
  }
  std::int32_t state_rows = 0;  // a swapped-out hybrid's host state row, with its host blocks
  for (const auto& [id, seq] : seqs_) {
    if (seq->swapped_state < 0) continue;
    ++state_rows;
    if (seq->running() || seq->swapped.empty()) {
      throw std::logic_error("scheduler: a host state row is held by a sequence not swapped out");
    }
  }
  if (state_rows != kv_.num_lent_host_state_rows()) {
    throw std::logic_error("scheduler: host state rows are lost or held twice");
  }
  for (msg::request_id id : waiting_.ids()) {
    const sequence& s = *seqs_.at(id);
    const auto n = static_cast<std::int32_t>(s.swapped.size());
    if (n != (s.swapped_tokens + kv_.block_size() - 1) / kv_.block_size()) {
      throw std::logic_error("scheduler: host blocks do not match the swapped tokens");
    }
    if (ready_.recurrent && n > 0 && s.swapped_state < 0) {
      throw std::logic_error("scheduler: a hybrid swapped out its KV without its state");
    }
    swapped += n;
  }
  // ... and, with a disk tier, by its copies in flight and by waiting requests' pins on what
  // was read for them: every block in use has a holder.
  std::vector<std::int32_t> held = kv_.host_blocks_in_tiers();
  const std::unordered_set<std::int32_t> in_tiers(held.begin(), held.end());
  for (const cache::block_id b : kv_.queued_copy_holds().ids()) held.push_back(b.value);
  for (const flight& f : flights_) {  // the copies of steps in flight
    for (const cache::block_id b : f.host_holds.ids()) held.push_back(b.value);
  }
  for (const cache::block_id b : kv_.queued_async_copies().host.ids()) held.push_back(b.value);
  for (const auto& [batch, f] : copy_flights_) {  // and of the copy stream
    for (const cache::block_id b : f.holds.host.ids()) held.push_back(b.value);
  }
  std::unordered_set<std::int32_t> swapped_blocks;  // a swap's blocks are its own alone
  for (const auto& [id, seq] : seqs_) {
    for (const cache::block_id b : seq->swapped.ids()) {
      if (in_tiers.count(b.value) || !swapped_blocks.insert(b.value).second) {
        throw std::logic_error("scheduler: a swapped-out block is held twice");
      }
      held.push_back(b.value);
    }
    for (const cache::block_id b : seq->host_pins.ids()) held.push_back(b.value);
    if (!seq->host_pins.empty() && seq->running()) {
      throw std::logic_error("scheduler: an admitted sequence still pins host blocks");
    }
    if (!seq->device_pin.blocks().empty() && seq->running()) {
      throw std::logic_error("scheduler: an admitted sequence still pins device blocks");
    }
  }
  std::sort(held.begin(), held.end());
  held.erase(std::unique(held.begin(), held.end()), held.end());
  if (swapped + kv_.num_host_cached() > static_cast<std::int32_t>(held.size()) ||
      kv_.num_host_blocks() - kv_.num_free_host() != static_cast<std::int32_t>(held.size())) {
    throw std::logic_error("scheduler: host blocks are lost or held twice");
  }
}

// Waiting sequences hold nothing; running ones cover the tokens in flight, counted in range.
void scheduler_core::check_rows() const {
  for (msg::request_id id : waiting_.ids()) {
    const sequence& s = *seqs_.at(id);
    if (s.recurrent) throw std::logic_error("scheduler: a waiting sequence holds a state slot");
    if (s.restore_block.value >= 0 || !s.snapshots.empty()) {
      throw std::logic_error("scheduler: a waiting sequence holds snapshots");
    }
    if (s.state != seq_state::waiting && s.state != seq_state::swapping_out) {
      throw std::logic_error("scheduler: a queued sequence is not waiting");
    }
    if (s.state == seq_state::swapping_out && s.swapped.empty()) {
      throw std::logic_error("scheduler: a sequence swaps out nothing");
    }
    if (!s.blocks.empty() || s.copy_batch != 0) {
      throw std::logic_error("scheduler: a waiting sequence holds blocks");
    }
    if (s.num_in_flight != 0 || s.samples_in_flight != 0) {
      throw std::logic_error("scheduler: a waiting sequence has rows in flight");
    }
  }
  for (msg::request_id id : running_) {
    const sequence& s = *seqs_.at(id);
    const auto covered = static_cast<std::int64_t>(s.blocks.size()) * kv_.block_size();
    if (covered < s.next_pos()) {
      throw std::logic_error("scheduler: blocks do not cover the tokens in flight");
    }
    if (s.num_in_flight < 0 || s.samples_in_flight < 0 ||
        s.samples_in_flight > static_cast<std::int32_t>(flights_.size())) {
      throw std::logic_error("scheduler: in-flight counts out of range");
    }
  }
}

// Snapshot rows, steps in flight, and between steps no block past the computed tokens.
void scheduler_core::check_steps() const {
  if (snapshots_on()) {  // every snapshot row is free, kept, or being taken by one sequence
    std::vector<std::int32_t> rows;
    std::int32_t tails = 0;
    for (msg::request_id id : running_) {
      for (const pending_snapshot& p : seqs_.at(id)->snapshots) {
        rows.push_back(p.slot);
        tails += p.kind == cache::snapshot_kind::tail;
      }
    }
    std::sort(rows.begin(), rows.end());
    if (std::adjacent_find(rows.begin(), rows.end()) != rows.end() || tails != snaps_.tail_rows() ||
        static_cast<std::int32_t>(rows.size()) + kv_.num_snapshots() +
                kv_.num_free_snapshot_slots() != kv_.snapshot_capacity()) {
      throw std::logic_error("scheduler: snapshot rows are lost or held twice");
    }
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
