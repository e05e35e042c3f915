#include "actors/scheduler/hybrid_snapshots.hpp"

#include <algorithm>
#include <stdexcept>

namespace courier::actors {

hybrid_snapshots::hybrid_snapshots(kv_manager& kv, msg::scheduler_stats& stats,
                                   std::int32_t checkpoint_tokens, bool decode_snapshots)
    : kv_(kv),
      on_(kv.snapshots().snapshot_capacity() > 0),
      stats_(stats),
      checkpoint_tokens_(checkpoint_tokens),
      decode_snapshots_(decode_snapshots) {}

void hybrid_snapshots::note_resume(const resume_point& at) {
  if (at.slot < 0 && !at.from_host_state) {
    ++stats_.snapshot_misses;
  } else {
    switch (at.kind) {
      case cache::snapshot_kind::exact:
        ++stats_.snapshot_hits_exact;
        break;
      case cache::snapshot_kind::intermediate:
        ++stats_.snapshot_hits_intermediate;
        break;
      case cache::snapshot_kind::branch:
        ++stats_.snapshot_hits_branch;
        break;
      case cache::snapshot_kind::tail:
        ++stats_.snapshot_hits_tail;
        break;
    }
    if (at.spilled) ++stats_.snapshot_hits_spilled;
  }
  stats_.snapshot_recomputed_tokens += static_cast<std::uint64_t>(at.stored_tokens - at.tokens);
}

// The depths the sequence snapshots at while it computes its prompt from at.tokens
// (prefill_snapshot_points), less the kinds this workload seldom resumes from: admission by
// reuse likelihood, so such a kind costs no cut of the prompt's chunks either.
void hybrid_snapshots::plan_checkpoints(sequence& s, const resume_point& at) {
  s.checkpoints.clear();
  if (!on()) return;
  bool worth[cache::num_snapshot_kinds] = {};
  bool asked[cache::num_snapshot_kinds] = {};
  for (const snapshot_point& p :
       prefill_snapshot_points(static_cast<std::int32_t>(s.tokens.size()), at.tokens,
                               at.stored_tokens, kv_.block_size(), checkpoint_tokens_)) {
    const auto k = static_cast<std::size_t>(p.kind);
    if (!asked[k]) {  // once per kind: asking counts toward the policy's exploration
      asked[k] = true;
      worth[k] = kv_.snapshots().worth_taking(p.kind);
    }
    if (worth[k]) s.checkpoints.push_back(p);
  }
}

// A prefill row of n tokens from next_pos(), cut to end at the next checkpoint (the state can
// be copied only after a row).
std::int32_t hybrid_snapshots::cut_at_checkpoint(const sequence& s, std::int32_t n) const {
  const std::int32_t from = s.next_pos();
  for (const snapshot_point& p : s.checkpoints) {
    if (p.depth > from) return std::min(n, p.depth - from);
  }
  return n;
}

std::int32_t hybrid_snapshots::snapshot_row(sequence& s, msg::plan_row& row, std::int32_t n) {
  if (!on()) return -1;
  const std::int32_t end = row.start_pos + n;
  // Checkpoints passed without a row ending there are gone; one this row ends at is taken.
  auto reached = std::find_if(s.checkpoints.begin(), s.checkpoints.end(),
                              [end](const snapshot_point& p) { return p.depth >= end; });
  const bool at_checkpoint = reached != s.checkpoints.end() && reached->depth == end;
  cache::snapshot_kind kind = at_checkpoint ? reached->kind : cache::snapshot_kind::tail;
  s.checkpoints.erase(s.checkpoints.begin(), reached + (at_checkpoint ? 1 : 0));
  bool may_evict = false;
  if (at_checkpoint) {
    may_evict = true;
  } else if (row.decode && decode_snapshots_ && end % kv_.block_size() == 0) {
    // A tail snapshot (what the conversation's next turn resumes from) is taken at every block
    // boundary, and only the latest kept: such rows in flight may push out kept snapshots only
    // while they hold under half the rows, so decoding never flushes the cache.
    may_evict = tail_rows_ < kv_.snapshots().snapshot_capacity() / 2;
  } else {
    return -1;
  }
  // Prefill checkpoints were admitted when planned; a tail is asked at each block boundary.
  if (kind == cache::snapshot_kind::tail && !kv_.snapshots().worth_taking(kind)) return -1;
  const std::optional<std::int32_t> slot = kv_.snapshots().take_snapshot_slot(may_evict);
  if (!slot) return -1;
  row.state_snapshot = *slot;
  s.snapshots.push_back({end, *slot, kind, false});
  if (kind == cache::snapshot_kind::tail) ++tail_rows_;
  return *slot;
}

void hybrid_snapshots::forget_pending(const pending_snapshot& p) {
  if (p.kind == cache::snapshot_kind::tail) --tail_rows_;
}

// The step that wrote `slot` answered: the snapshot holds. A newer tail replaces older ones.
void hybrid_snapshots::row_answered(sequence& s, bool restored, std::int32_t slot, bool stands) {
  if (restored) unpin_restore(s);
  if (slot < 0) return;
  if (stands) {
    taken(s, slot);
  } else {
    lost(s, slot);
  }
}

void hybrid_snapshots::taken(sequence& s, std::int32_t slot) {
  auto it = std::find_if(s.snapshots.begin(), s.snapshots.end(),
                         [slot](const pending_snapshot& p) { return p.slot == slot; });
  if (it == s.snapshots.end()) return;
  it->taken = true;
  if (it->kind != cache::snapshot_kind::tail) return;
  const std::int32_t depth = it->depth;
  for (auto p = s.snapshots.begin(); p != s.snapshots.end();) {
    if (p->kind == cache::snapshot_kind::tail && p->taken && p->depth < depth) {
      kv_.snapshots().give_back_snapshot_slot(p->slot);
      forget_pending(*p);
      p = s.snapshots.erase(p);
    } else {
      ++p;
    }
  }
}

// The step that was to write `slot` did not leave the state it was planned for (drafts were
// rejected): the slot goes back unused.
void hybrid_snapshots::lost(sequence& s, std::int32_t slot) {
  auto it = std::find_if(s.snapshots.begin(), s.snapshots.end(),
                         [slot](const pending_snapshot& p) { return p.slot == slot; });
  if (it == s.snapshots.end()) return;
  kv_.snapshots().give_back_snapshot_slot(it->slot);
  forget_pending(*it);
  s.snapshots.erase(it);
}

// After the sequence's blocks went into the prefix cache: its snapshots that hold and that
// those blocks cover go in too.
void hybrid_snapshots::keep(sequence& s, const prefix_namespace& ns) {
  for (auto p = s.snapshots.begin(); p != s.snapshots.end();) {
    if (p->taken && p->depth <= s.num_in_cache) {
      if (kv_.snapshots().add_snapshot(ns, s.tokens, s.blocks, p->depth, p->slot, p->kind,
                                       tick())) {
        ++stats_.snapshots_taken;
      }
      forget_pending(*p);
      p = s.snapshots.erase(p);
    } else {
      ++p;
    }
  }
}

// The sequence stops running (ended or preempted): its pin goes, and so do rows it was taking
// snapshots into (a step in flight may still write one; any later use of the row is a later
// step, which the engine runs after it).
void hybrid_snapshots::drop(sequence& s) {
  unpin_restore(s);
  s.restore_slot = -1;
  for (const pending_snapshot& p : s.snapshots) {
    kv_.snapshots().give_back_snapshot_slot(p.slot);
    forget_pending(p);
  }
  s.snapshots.clear();
  s.checkpoints.clear();
}

void hybrid_snapshots::unpin_restore(sequence& s) {
  if (s.restore_block.value < 0) return;
  kv_.unpin_snapshot(s.restore_block);
  s.restore_block = {};
}

void hybrid_snapshots::check_rows(const std::vector<const sequence*>& running) const {
  std::vector<std::int32_t> rows;
  std::int32_t tails = 0;
  for (const sequence* s : running) {
    for (const pending_snapshot& p : s->snapshots) {
      rows.push_back(p.slot);
      tails += p.kind == cache::snapshot_kind::tail;
    }
  }
  std::sort(rows.begin(), rows.end());
  if (std::adjacent_find(rows.begin(), rows.end()) != rows.end() || tails != tail_rows_ ||
      static_cast<std::int32_t>(rows.size()) + kv_.snapshots().num_snapshots() +
              kv_.snapshots().num_free_snapshot_slots() !=
          kv_.snapshots().snapshot_capacity()) {
    throw std::logic_error("scheduler: snapshot rows are lost or held twice");
  }
}

}  // namespace courier::actors
