#pragma once
// kv_manager's snapshots of a hybrid's recurrent state (kv_manager::snapshots()): the device's
// snapshot rows, snapshots detached to host rows by their prefix's chain hash, host rows lent to
// swapped-out sequences, and the state copies these need. The policy of when to take one is
// hybrid_snapshots'; the index is cache/snapshot_index, kept in kv_manager's state
// (kv_manager.cpp, kv_tiers.cpp); this is the part of the surface that speaks of it.
#include <cstdint>
#include <optional>
#include <vector>

#include "actors/scheduler/kv_types.hpp"
#include "cache/block_refs.hpp"

namespace courier::actors {

class kv_snapshots : public kv_part {
 public:
  explicit kv_snapshots(kv_manager& kv) : kv_part(kv) {}

  // Snapshot rows. A row for a snapshot about to be taken, evicting the policy's choice when
  // none is free and `may_evict`; nothing when none can be had.
  std::optional<std::int32_t> take_snapshot_slot(bool may_evict);
  void give_back_snapshot_slot(std::int32_t slot);
  // Whether a snapshot of `kind` is worth taking (the policy's admission by reuse likelihood).
  bool worth_taking(cache::snapshot_kind kind);
  // Registers the snapshot in `slot` as the state after table's first `depth` tokens, whose
  // blocks the prefix cache stores (insert() first); false (the row goes back) when they are not
  // stored or the prefix has a snapshot already.
  // `ns` and `tokens` name the prefix (its chain hash keys it once detached).
  bool add_snapshot(const prefix_namespace& ns, const std::vector<msg::token_id>& tokens,
                    const cache::block_refs& table, std::int32_t depth, std::int32_t slot,
                    cache::snapshot_kind kind, std::uint64_t now);
  // With a KV host tier, a hybrid's snapshots evicted from the device are detached: kept in a
  // host row by their prefix's chain hash (the policy's choice, when worth it), so their blocks
  // may leave the device too. find_host_resume: the deepest prefix of tokens (within
  // max_tokens) deeper than at.tokens whose blocks the device stores (up to at.stored_tokens)
  // or the host tier keeps after them, with a detached snapshot that is ready, pinned and
  // counted as a hit; tokens 0: none. take_detached: the snapshots detached since the last
  // call, for the plan that carries their copies; detached_answered: its step answered (failed:
  // they are forgotten, their copies may not have run).
  host_resume find_host_resume(const prefix_namespace& ns, const std::vector<msg::token_id>& tokens,
                               const resume_point& at, std::int32_t max_tokens, std::uint64_t now);
  void unpin_detached(std::uint64_t hash);
  // The last of `hashes` (chain hashes of consecutive blocks) with a detached snapshot, ready
  // or not, as an index; -1: none.
  std::int32_t deepest_detached(const std::vector<std::uint64_t>& hashes) const;
  std::vector<spilled_block> take_detached();
  void detached_answered(const std::vector<spilled_block>& detached, bool ok);
  std::int32_t num_detached_snapshots() const;
  // The deepest prefix of table's first `tokens` tokens (whole blocks) with a snapshot, in
  // tokens (0: none): where a hybrid preempted now would resume from.
  std::int32_t snapshot_depth(const cache::block_refs& table, std::int32_t tokens) const;
  std::int32_t snapshot_capacity() const;
  std::int32_t num_snapshots() const;  // kept in device rows (not counting spilled ones)
  std::int32_t num_free_snapshot_slots() const;
  std::int32_t num_spilled_snapshots() const;
  // The copies spills and promotions since the last call need, in order: the next step runs
  // them before its rows.
  std::vector<msg::state_copy> take_state_copies();
  // A swapped-out hybrid's recurrent state (swap preemption): a host row of the snapshots'
  // host tier for it (the least useful spilled snapshot giving its row up when none is free;
  // nothing without that tier), held until given back (giving back -1 does nothing);
  // copy_state queues a copy between it and a state slot behind the spills and promotions
  // queued before (take_state_copies).
  std::optional<std::int32_t> take_host_state_row();
  void give_back_host_state_row(std::int32_t host_row);
  void copy_state(bool to_host, std::int32_t row, std::int32_t host_row);
  std::int32_t num_lent_host_state_rows() const;
  // Whether take_host_state_row would give a row now (one free, or a spilled snapshot to drop).
  bool host_state_row_available() const;
  // A step that carried state copies failed: the copies may not have run, so every snapshot not
  // being restored is forgotten.
  void forget_snapshots();

};

}  // namespace courier::actors
