#pragma once
// Which recurrent-state snapshot a hybrid model's prefix cache gives up when it needs a row or
// KV blocks. Marconi's utility (MLSys 2025) is recency plus FLOPs saved per byte, each min-max
// normalised over the candidates, the lowest going first. A snapshot `depth` tokens deep saves
// recomputing that prefix: linear work in the depth (every layer's matmuls, the Mamba-2 scan)
// plus attention's quadratic term; it costs its state rows plus the KV blocks it keeps stored.
//
// courier weighs the FLOPs by how likely a snapshot of that kind is to be used at all, learned
// from the workload: of the snapshots of each kind kept (exact: a prompt's end; intermediate;
// branch; tail: an answer's end), the share that some later request resumed from (a Laplace
// estimate over a decaying window). Multi-turn chat resumes from tails and seldom from a
// prompt's end; questions about shared documents resume from branches and checkpoints and never
// from an answer's end: each workload's useless kind goes first, whatever its depth. Marconi
// gets the same effect with fixed admission rules (tails and branch points only); learning it
// lets courier also keep exact and checkpoint snapshots where they pay. Mechanism
// (cache/snapshot_index) does not choose; this does.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "cache/snapshot_index.hpp"

namespace courier::actors {

// A depth (tokens, a block multiple) a prefilling sequence snapshots at, and why.
struct snapshot_point {
  std::int32_t depth = 0;
  cache::snapshot_kind kind = cache::snapshot_kind::exact;
};

// Where a prompt of `prompt_tokens`, computed from `resumed` (its restored prefix, 0: none)
// with KV stored up to `stored` (>= resumed), takes snapshots, in ascending depth: every
// `every` tokens (rounded down to whole blocks, at least one; 0: none), where it leaves the
// stored path (Marconi's admission: a prefix two prompts shared is likely shared again), and the
// last block boundary before its last token (what a repeated prompt, or the conversation's next
// turn, resumes from). A branch point on a checkpoint counts as a branch.
inline std::vector<snapshot_point> prefill_snapshot_points(std::int32_t prompt_tokens,
                                                           std::int32_t resumed,
                                                           std::int32_t stored,
                                                           std::int32_t block_size,
                                                           std::int32_t every) {
  const std::int32_t last = (prompt_tokens - 1) / block_size * block_size;
  const std::int32_t step = every <= 0 ? 0 : std::max(block_size, every / block_size * block_size);
  std::vector<snapshot_point> all;
  for (std::int32_t d = (resumed / std::max(step, 1) + 1) * step; step > 0 && d < last; d += step) {
    all.push_back({d, cache::snapshot_kind::intermediate});
  }
  if (stored > resumed && stored < last) all.push_back({stored, cache::snapshot_kind::branch});
  if (last > resumed) all.push_back({last, cache::snapshot_kind::exact});
  // Ascending; at a shared depth the kind listed later (a branch over a checkpoint) wins.
  std::stable_sort(all.begin(), all.end(), [](const snapshot_point& a, const snapshot_point& b) {
    return a.depth < b.depth;
  });
  std::vector<snapshot_point> out;
  for (const snapshot_point& p : all) {
    if (!out.empty() && out.back().depth == p.depth) {
      out.back() = p;
    } else {
      out.push_back(p);
    }
  }
  return out;
}

struct snapshot_costs {
  double linear_flops_per_token = 1;   // 2 x parameters: matmuls, conv, scan
  double attention_flops_per_pair = 0; // per (query, key) pair, summed over attention layers
  double snapshot_bytes = 1;           // one snapshot's Mamba-2 state
  double kv_bytes_per_token = 0;       // KV of the attention layers
  double device_flops = 0;             // the device's compute rate, FLOP/s
  double host_bytes_per_s = 0;         // its copy rate to and from host memory

  double flops_saved(double depth) const {
    return linear_flops_per_token * depth + attention_flops_per_pair * depth * (depth + 1) / 2;
  }
  double bytes(double depth) const { return snapshot_bytes + kv_bytes_per_token * depth; }
};

class snapshot_policy {
 public:
  snapshot_costs costs;
  // Weight of (reuse-weighted) FLOP efficiency against recency; 0: plain LRU.
  double alpha = 1.0;
  // false: Marconi's utility as published (no reuse weighting).
  bool learn_reuse = true;

  // A snapshot of `kind` was kept; one of `kind` was resumed from for the first time.
  void kept(cache::snapshot_kind kind) { decay(seen(kind).kept += 1); }
  void reused(cache::snapshot_kind kind) { seen(kind).reused += 1; }
  // The estimated chance that a kept snapshot of `kind` is ever resumed from.
  double reuse(cache::snapshot_kind kind) const {
    const counts& c = kinds_[static_cast<std::size_t>(kind)];
    return (c.reused + 1) / (c.kept + 2);
  }

  // Admission by reuse likelihood: whether to take a snapshot of `kind` at all. A kind whose
  // snapshots are seldom resumed from (under 1 in 32, once 64 were kept) is taken only one time
  // in 16, so the estimate can still learn that the workload changed.
  bool worth_taking(cache::snapshot_kind kind) {
    counts& c = seen(kind);
    if (!learn_reuse || c.kept < 64 || reuse(kind) >= 1.0 / 32) return true;
    return (++c.skipped % 16) == 0;
  }

  // The candidate to evict (pinned entries are never candidates); null when none.
  const cache::snapshot_entry* victim(const std::vector<const cache::snapshot_entry*>& all) const {
    double t_lo = std::numeric_limits<double>::max(), t_hi = std::numeric_limits<double>::lowest();
    double e_lo = t_lo, e_hi = t_hi;
    for (const cache::snapshot_entry* e : all) {
      if (e->pins > 0) continue;
      const double t = static_cast<double>(e->last_used), f = value(*e);
      t_lo = t < t_lo ? t : t_lo;
      t_hi = t > t_hi ? t : t_hi;
      e_lo = f < e_lo ? f : e_lo;
      e_hi = f > e_hi ? f : e_hi;
    }
    const cache::snapshot_entry* best = nullptr;
    double best_score = std::numeric_limits<double>::max();
    for (const cache::snapshot_entry* e : all) {
      if (e->pins > 0) continue;
      const double score = norm(static_cast<double>(e->last_used), t_lo, t_hi) +
                           alpha * norm(value(*e), e_lo, e_hi);
      // Ties: the older, then the lower row (deterministic whatever the hash map's order).
      const auto row = [](const cache::snapshot_entry* x) {
        return std::make_pair(x->slot, x->host_slot);
      };
      if (!best || score < best_score ||
          (score == best_score && (e->last_used < best->last_used ||
                                   (e->last_used == best->last_used && row(e) < row(best))))) {
        best = e;
        best_score = score;
      }
    }
    return best;
  }

  // Whether a snapshot evicted from the device goes to the host tier: when recomputing its
  // prefix would take longer than copying it back.
  bool worth_spilling(const cache::snapshot_entry& e) const {
    if (costs.device_flops <= 0 || costs.host_bytes_per_s <= 0) return false;
    return costs.flops_saved(static_cast<double>(e.depth)) / costs.device_flops >=
           costs.snapshot_bytes / costs.host_bytes_per_s;
  }

  // FLOPs saved per byte, weighted by the kind's reuse (a snapshot already resumed from counts
  // as certain to be useful again).
  double value(const cache::snapshot_entry& e) const {
    const double d = static_cast<double>(e.depth);
    const double p = !learn_reuse || e.hits > 0 ? 1.0 : reuse(e.kind);
    return p * costs.flops_saved(d) / costs.bytes(d);
  }

 private:
  struct counts {
    double kept = 0;
    double reused = 0;
    std::uint64_t skipped = 0;  // snapshots not taken (worth_taking)
  };
  counts& seen(cache::snapshot_kind kind) { return kinds_[static_cast<std::size_t>(kind)]; }
  // A window of about the last 1,000 snapshots of a kind, so the estimate follows the workload.
  void decay(double kept) {
    if (kept < 1024) return;
    for (counts& c : kinds_) {
      c.kept /= 2;
      c.reused /= 2;
    }
  }
  static double norm(double x, double lo, double hi) { return hi > lo ? (x - lo) / (hi - lo) : 0; }

  std::array<counts, cache::num_snapshot_kinds> kinds_{};
};

}  // namespace courier::actors
