// A hybrid model's prefix caching: where a sequence resumes (the deepest cached prefix with a
// snapshot of its recurrent state), where it takes snapshots (the prompt's last block boundary,
// checkpoints through a long prefill, the point where it left a stored path, and decode-time
// block boundaries for the conversation's next turn), and how they reach the prefix cache.
// The policy is here; cache/snapshot_index keeps them and actors/scheduler/snapshot_policy.hpp
// chooses what goes.
#include <algorithm>
#include <map>

#include "actors/scheduler/scheduler_core.hpp"

namespace courier::actors {

void scheduler_core::note_resume(const sequence& s, const resume_point& at) {
  (void)s;
  if (at.slot < 0) {
    ++stats_.snapshot_misses;
  } else {
    switch (at.kind) {
      case cache::snapshot_kind::exact: ++stats_.snapshot_hits_exact; break;
      case cache::snapshot_kind::intermediate: ++stats_.snapshot_hits_intermediate; break;
      case cache::snapshot_kind::branch: ++stats_.snapshot_hits_branch; break;
      case cache::snapshot_kind::tail: ++stats_.snapshot_hits_tail; break;
    }
    if (at.spilled) ++stats_.snapshot_hits_spilled;
  }
  stats_.snapshot_recomputed_tokens += static_cast<std::uint64_t>(at.stored_tokens - at.tokens);
}

// The depths the sequence snapshots at while it computes its prompt from at.tokens: every
// checkpoint interval, where it leaves the stored path (Marconi's admission: a prefix that two
// prompts shared is likely shared again), and the last block boundary before its last token
// (what a repeated prompt, or the conversation's next turn, resumes from).
void scheduler_core::plan_checkpoints(sequence& s, const resume_point& at) {
  s.checkpoints.clear();
  s.checkpoint_kinds.clear();
  if (!snapshots_on()) return;
  const std::int32_t bs = kv_.block_size();
  const std::int32_t last = (static_cast<std::int32_t>(s.tokens.size()) - 1) / bs * bs;
  std::map<std::int32_t, cache::snapshot_kind> at_depth;
  const std::int32_t every = opts_.ssm_checkpoint_tokens <= 0
                                 ? 0
                                 : std::max(bs, opts_.ssm_checkpoint_tokens / bs * bs);
  if (every > 0) {
    for (std::int32_t d = (at.tokens / every + 1) * every; d < last; d += every) {
      at_depth[d] = cache::snapshot_kind::intermediate;
    }
  }
  if (at.stored_tokens > at.tokens && at.stored_tokens < last) {
    at_depth[at.stored_tokens] = cache::snapshot_kind::branch;
  }
  if (last > at.tokens) at_depth[last] = cache::snapshot_kind::exact;
  // Admission by reuse likelihood: a kind this workload seldom resumes from is not taken, and
  // then costs no cut of the prompt's chunks either.
  bool worth[cache::num_snapshot_kinds] = {};
  bool asked[cache::num_snapshot_kinds] = {};
  for (const auto& [d, kind] : at_depth) {
    const auto k = static_cast<std::size_t>(kind);
    if (!asked[k]) {
      asked[k] = true;
      worth[k] = kv_.worth_taking(kind);
    }
    if (!worth[k]) continue;
    s.checkpoints.push_back(d);
    s.checkpoint_kinds.push_back(kind);
  }
}

// A prefill row of n tokens from next_pos(), cut to end at the next checkpoint (the state can
// be copied only after a row).
std::int32_t scheduler_core::cut_at_checkpoint(const sequence& s, std::int32_t n) const {
  const std::int32_t from = s.next_pos();
  for (const std::int32_t d : s.checkpoints) {
    if (d > from) return std::min(n, d - from);
  }
  return n;
}

void scheduler_core::snapshot_row(sequence& s, msg::plan_row& row, std::int32_t n,
                                  fed_row& fed) {
  if (!snapshots_on()) return;
  if (s.restore_slot >= 0) {  // the sequence's first row resumes from the pinned snapshot
    row.state_restore = s.restore_slot;
    s.restore_slot = -1;
    fed.restores = true;
  }
  const std::int32_t end = row.start_pos + n;
  while (!s.checkpoints.empty() && s.checkpoints.front() < end) {  // passed without a row end
    s.checkpoints.erase(s.checkpoints.begin());
    s.checkpoint_kinds.erase(s.checkpoint_kinds.begin());
  }
  cache::snapshot_kind kind = cache::snapshot_kind::tail;
  bool may_evict = false;
  if (!s.checkpoints.empty() && s.checkpoints.front() == end) {
    kind = s.checkpoint_kinds.front();
    may_evict = true;
    s.checkpoints.erase(s.checkpoints.begin());
    s.checkpoint_kinds.erase(s.checkpoint_kinds.begin());
  } else if (row.decode && opts_.ssm_decode_snapshots && end % kv_.block_size() == 0) {
    // A tail snapshot (what the conversation's next turn resumes from) is taken at every block
    // boundary, and only the latest kept: such rows in flight may push out kept snapshots only
    // while they hold under half the rows, so decoding never flushes the cache.
    may_evict = tail_rows_ < kv_.snapshot_capacity() / 2;
  } else {
    return;
  }
  // Prefill checkpoints were admitted when planned; a tail is asked at each block boundary.
  if (kind == cache::snapshot_kind::tail && !kv_.worth_taking(kind)) return;
  const std::optional<std::int32_t> slot = kv_.take_snapshot_slot(may_evict);
  if (!slot) return;
  row.state_snapshot = *slot;
  fed.snapshot = *slot;
  s.snapshots.push_back({end, *slot, kind, false});
  if (kind == cache::snapshot_kind::tail) ++tail_rows_;
}

void scheduler_core::forget_pending(const pending_snapshot& p) {
  if (p.kind == cache::snapshot_kind::tail) --tail_rows_;
}

// The step that wrote `slot` answered: the snapshot holds. A newer tail replaces older ones.
void scheduler_core::snapshot_taken(sequence& s, std::int32_t slot) {
  auto it = std::find_if(s.snapshots.begin(), s.snapshots.end(),
                         [slot](const pending_snapshot& p) { return p.slot == slot; });
  if (it == s.snapshots.end()) return;
  it->taken = true;
  if (it->kind != cache::snapshot_kind::tail) return;
  const std::int32_t depth = it->depth;
  for (auto p = s.snapshots.begin(); p != s.snapshots.end();) {
    if (p->kind == cache::snapshot_kind::tail && p->taken && p->depth < depth) {
      kv_.give_back_snapshot_slot(p->slot);
      forget_pending(*p);
      p = s.snapshots.erase(p);
    } else {
      ++p;
    }
  }
}

// After the sequence's blocks went into the prefix cache: its snapshots that hold and that
// those blocks cover go in too.
void scheduler_core::keep_snapshots(sequence& s) {
  for (auto p = s.snapshots.begin(); p != s.snapshots.end();) {
    if (p->taken && p->depth <= s.num_in_cache) {
      if (kv_.add_snapshot(s.blocks, p->depth, p->slot, p->kind, ++snapshot_clock_)) {
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
void scheduler_core::drop_snapshots(sequence& s) {
  if (s.restore_pinned) kv_.unpin_snapshot(s.restore_block);
  s.restore_pinned = false;
  s.restore_slot = -1;
  for (const pending_snapshot& p : s.snapshots) {
    kv_.give_back_snapshot_slot(p.slot);
    forget_pending(p);
  }
  s.snapshots.clear();
  s.checkpoints.clear();
  s.checkpoint_kinds.clear();
}

}  // namespace courier::actors
