#pragma once
// How many prompt-lookup drafts one sequence is offered, adapted to how well its drafts do: the
// length doubles after a row whose drafts all stood and falls to what was accepted + 1
// otherwise; after consecutive rows that accept nothing it pauses for 0, 1, 3, 7, ... 31 decode
// steps, and after searches that find nothing for 1, 3, then 7 (a copy run is noticed at most 7
// tokens late; a search is ~0.5 us per row on a 2k-token history), so a workload that does not
// repeat itself pays almost nothing. See the scheduler README's "Prompt-lookup speculative
// decoding".
#include <algorithm>
#include <cstdint>

namespace courier::actors {

struct draft_state {
  std::int32_t len = 0;     // drafts to ask for next (0: not yet set)
  std::int32_t pause = 0;   // decode steps left without proposing
  std::int32_t misses = 0;  // consecutive verifications that accepted nothing
  std::int32_t idle = 0;    // consecutive searches that found nothing

  // Whether this decode step searches (else it counts a paused step).
  bool due() const { return pause == 0; }
  // A decode step without a search (a row that follows one in flight).
  void skip() {
    if (pause > 0) --pause;
  }
  // Drafts to search for this decode step, at most `limit` (of at most num_draft); 0: none
  // (paused: the step counts).
  std::int32_t want(std::int32_t num_draft, std::int32_t limit) {
    if (len == 0) len = num_draft;
    if (pause > 0) {
      --pause;
      return 0;
    }
    return std::min(len, limit);
  }
  // The search found drafts, or none.
  void searched(bool found) {
    if (found) {
      idle = 0;
    } else {
      pause = std::min(7, (2 << std::min(idle, 2)) - 1);
      ++idle;
    }
  }
  // A row with `drafted` drafts was verified: `accepted` of them stood.
  void verified(std::int32_t num_draft, std::int32_t drafted, std::int32_t accepted) {
    len = accepted == drafted ? std::min(num_draft, 2 * len) : std::max(1, accepted + 1);
    if (accepted == 0) {
      ++misses;
      pause = (1 << std::min(misses - 1, 5)) - 1;
    } else {
      misses = 0;
    }
  }
};

}  // namespace courier::actors
