#include "actors/scheduler/prompt_admission.hpp"

#include <algorithm>
#include <utility>

namespace courier::actors {

prompt_admission::prompt_admission(kv_manager& kv, hybrid_snapshots& snaps,
                                   const copy_batches& copies, msg::scheduler_stats& stats,
                                   scheduler_report& report, bool recurrent)
    : kv_(kv),
      snaps_(snaps),
      copies_(copies),
      stats_(stats),
      report_(report),
      recurrent_(recurrent) {}

// Looks the sequence up in the prefix cache and gives it blocks for its first chunk; false (and
// nothing held, nothing counted) when the blocks cannot be had. `fed`: the chunk's tokens.
// With blocks copied back from the host tier (swapped in, or promoted), it is admitted with the
// blocks of its first chunk too (so that, resumed, it can go on) but fed nothing: its rows wait
// for the copies (copy_batch).
bool prompt_admission::admit(sequence& s, const prefix_namespace& ns, std::int32_t budget,
                             std::int32_t& fed) {
  if (!s.swapped.empty()) return admit_swapped(s, budget, fed);
  const std::int32_t bs = kv_.block_size();
  kv_manager::prompt_resume l = look_up(s, ns);
  std::int32_t host = static_cast<std::int32_t>(l.from_host.size()) * bs;
  snaps_.plan_checkpoints(s, l.at);
  const auto num_tokens = static_cast<std::int32_t>(s.tokens.size());
  fed = std::min(budget, num_tokens - l.matched - host);
  const auto have = static_cast<std::int32_t>(l.match.blocks().size());
  // A hybrid's first chunk ends at its first checkpoint (its state is copied after a row).
  std::int32_t first =
      std::min(fed, s.checkpoints.empty() ? fed : s.checkpoints[0].depth - l.matched);
  auto fresh = kv_.allocate((l.matched + host + first + bs - 1) / bs - have);
  if (!fresh) {
    if (l.at.slot >= 0) kv_.unpin_snapshot(l.at.block);
    if (l.deeper.tokens > 0) kv_.snapshots().unpin_detached(l.deeper.hash);
    if (l.lookup) kv_.release_matched(std::move(l.match));
    s.checkpoints.clear();
    return false;
  }
  if (!l.from_host.empty()) {  // copied back into the first fresh blocks instead of computed
    const std::uint64_t from_disk = kv_.disk().stats().promoted;
    const std::int32_t got = kv_.host().promote(l.from_host, *fresh);
    stats_.disk_cache_hit_tokens +=
        (kv_.disk().stats().promoted - from_disk) * static_cast<std::uint64_t>(bs);
    if (got < static_cast<std::int32_t>(l.from_host.size()) && l.deeper.tokens > 0) {
      // A hybrid's state goes only with all of its prefix (its pins kept them: not expected).
      kv_.snapshots().unpin_detached(l.deeper.hash);
      kv_.release_matched(std::move(l.match));
      s.checkpoints.clear();
      return false;  // the copies queued write fresh blocks their batch holds: harmless
    }
    if (got < static_cast<std::int32_t>(l.from_host.size())) {  // evicted making room: computed
      host = got * bs;
      const auto covered = (have + static_cast<std::int32_t>(fresh->size())) * bs;
      first = std::min({budget, num_tokens - l.matched - host, covered - l.matched - host});
      kv_.truncate(*fresh, (l.matched + host + first + bs - 1) / bs - have);
    }
    stats_.host_cache_hit_tokens += static_cast<std::uint64_t>(host);
  }
  fed = host > 0 ? 0 : first;
  take_admitted(s, l, std::move(*fresh), host);
  return true;
}

// Back from the host tier, once the copies out have run: its blocks swapped in (and a hybrid's
// state into its new slot), fed nothing until they are.
bool prompt_admission::admit_swapped(sequence& s, std::int32_t budget, std::int32_t& fed) {
  if (s.state == seq_state::swapping_out) return false;
  const std::int32_t bs = kv_.block_size();
  const std::int32_t done = s.swapped_tokens;
  const std::int32_t first = std::min(budget, static_cast<std::int32_t>(s.tokens.size()) - done);
  const auto n = static_cast<std::int32_t>(s.swapped.size());
  if (!kv_.host().swap_in(s.swapped, std::max(0, (done + first + bs - 1) / bs - n), s.blocks)) {
    return false;
  }
  stats_.swapped_in_blocks += static_cast<std::uint64_t>(n);
  if (s.swapped_state >= 0) {  // a hybrid's state comes back into its new slot first
    kv_.snapshots().copy_state(false, s.recurrent.index(), s.swapped_state);
    kv_.snapshots().give_back_host_state_row(std::exchange(s.swapped_state, -1));
    s.state_copied = true;
  }
  s.num_computed = done;
  s.num_in_cache = 0;
  s.swapped_tokens = 0;
  s.copy_batch = copies_.next();
  s.copy_base = 0;
  fed = 0;
  return true;
}

// How the sequence's prompt resumes: the prefix matched on the device (and a hybrid's snapshot
// pinned), the host tier's blocks past it, or a hybrid's detached snapshot deeper in the host
// tiers. Prompt logprobs need every prompt position computed, so such requests reuse nothing.
kv_manager::prompt_resume prompt_admission::look_up(sequence& s, const prefix_namespace& ns) {
  if (!kv_.caching() || s.wants_prompt_logprobs()) return {};
  return kv_.resume(ns, s.tokens, recurrent_, snaps_.tick());
}

void prompt_admission::take_admitted(sequence& s, kv_manager::prompt_resume& l,
                                     cache::block_refs fresh, std::int32_t host) {
  if (snaps_.on() && l.lookup) snaps_.note_resume(l.at);
  if (l.at.slot >= 0) {  // pinned until the row that restores it is answered
    s.restore_slot = l.at.slot;
    s.restore_block = l.at.block;
  }
  if (l.deeper.tokens > 0) {  // the state into its slot, before any row of it
    kv_.snapshots().copy_state(false, s.recurrent.index(), l.deeper.host_row);
    kv_.snapshots().unpin_detached(
        l.deeper.hash);  // anything later that writes the row is ordered after
    s.state_copied = true;
  }
  if (l.lookup) {
    kv_.take(l.match, s.blocks);
    // As vLLM counts them: every prompt token looked up, and those whose KV was reused.
    report_.prefix_lookup(s.tokens.size(), static_cast<std::uint64_t>(l.matched + host));
  }
  s.blocks.append(std::move(fresh));
  s.host_pins.release();  // what was read for it is copied (or, evicted meanwhile, computed)
  kv_.release_matched(std::move(s.device_pin));  // its lookup holds those blocks now
  s.num_computed = l.matched + host;
  s.num_in_cache = l.matched;  // the promoted blocks are the sequence's until it inserts them
  if (host > 0) {
    s.copy_batch = copies_.next();
    s.copy_base = l.deeper.tokens > 0 ? 0 : l.matched;  // a hybrid's state is not at `matched`
  }
}

}  // namespace courier::actors
