// scheduler_core, prompt lookup: proposing drafts and adapting how many to ask for (see the
// README's "Prompt-lookup speculative decoding"). Verification results are applied in
// scheduler_core.cpp (on_result, accept_tokens).
#include "actors/scheduler/scheduler_core.hpp"

#include <algorithm>
#include <cstdio>

namespace courier::actors {

namespace {

std::string hex(std::uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

}  // namespace

cache::lookup_scope lookup_scope_of(const msg::engine_ready& ready, const std::string& adapter,
                                    const std::string& tenant) {
  return {hex(ready.weights_fingerprint), hex(ready.tokenizer_fingerprint), adapter, tenant};
}

cache::lookup_scope scheduler_core::scope_of(const sequence& s) const {
  return lookup_scope_of(ready_, loras_.cache_key(s.req.adapter), s.req.tenant);
}

// Up to the sequence's draft length, never past max_total, within the step's token budget.
std::vector<msg::token_id> scheduler_core::propose(sequence& s, std::int32_t budget,
                                                   cache::proposal_source& source) {
  source = cache::proposal_source::none;
  // Penalties change between positions, which one verification row cannot follow.
  if (!opts_.lookup.enabled || s.penalised()) return {};
  if (s.draft_len == 0) s.draft_len = opts_.lookup.num_draft;
  if (s.draft_pause > 0) {
    --s.draft_pause;
    return {};
  }
  const std::int32_t room = s.max_total - static_cast<std::int32_t>(s.tokens.size()) - 1;
  const std::int32_t k = std::min({s.draft_len, room, budget - 1});
  if (k <= 0) return {};
  auto drafts = lookup_.propose(scope_of(s), cache::token_span(s.tokens),
                                static_cast<std::size_t>(k), &source);
  // Text that finds no match tends to go on finding none: search again after 1, then 3, then
  // every 8 decode steps (a copy run is noticed at most 7 tokens late; the search is ~0.5 us per
  // row on a 2k-token history).
  if (drafts.empty()) {
    s.draft_pause = std::min(7, (2 << std::min(s.draft_idle, 2)) - 1);
    ++s.draft_idle;
  } else {
    s.draft_idle = 0;
  }
  return drafts;
}

// Adaptive draft length: double after a fully accepted row, shrink to what was accepted (+1)
// otherwise; after rows that accept nothing, pause proposing for 1, 3, 7, ... 31 decode steps so
// a workload that does not repeat itself pays almost nothing.
void scheduler_core::adapt_drafts(sequence& s, std::int32_t drafted, std::int32_t accepted,
                                  cache::proposal_source source) {
  const bool own = source == cache::proposal_source::own;
  ++stats_.spec_drafts;
  if (!own) ++stats_.spec_drafts_shared;
  const auto d = static_cast<std::uint64_t>(drafted), a = static_cast<std::uint64_t>(accepted);
  (own ? stats_.spec_draft_tokens_own : stats_.spec_draft_tokens_shared) += d;
  (own ? stats_.spec_accepted_own : stats_.spec_accepted_shared) += a;
  if (accepted == drafted) {
    s.draft_len = std::min(opts_.lookup.num_draft, 2 * s.draft_len);
  } else {
    s.draft_len = std::max(1, accepted + 1);
  }
  if (accepted == 0) {
    ++s.draft_misses;
    s.draft_pause = (1 << std::min(s.draft_misses - 1, 5)) - 1;
  } else {
    s.draft_misses = 0;
  }
}

}  // namespace courier::actors
