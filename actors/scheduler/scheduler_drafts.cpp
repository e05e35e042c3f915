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
  const std::int32_t room = s.max_total - static_cast<std::int32_t>(s.tokens.size()) - 1;
  const std::int32_t k = s.drafts.want(opts_.lookup.num_draft, std::min(room, budget - 1));
  if (k <= 0) return {};
  auto drafts = lookup_.propose(scope_of(s), cache::token_span(s.tokens),
                                static_cast<std::size_t>(k), &source);
  s.drafts.searched(!drafts.empty());
  return drafts;
}

// A verified row's drafts, counted, and the sequence's next draft length (draft_state).
void scheduler_core::adapt_drafts(sequence& s, std::int32_t drafted, std::int32_t accepted,
                                  cache::proposal_source source) {
  const bool own = source == cache::proposal_source::own;
  ++stats_.spec_drafts;
  if (!own) ++stats_.spec_drafts_shared;
  const auto d = static_cast<std::uint64_t>(drafted), a = static_cast<std::uint64_t>(accepted);
  (own ? stats_.spec_draft_tokens_own : stats_.spec_draft_tokens_shared) += d;
  (own ? stats_.spec_accepted_own : stats_.spec_accepted_shared) += a;
  s.drafts.verified(opts_.lookup.num_draft, drafted, accepted);
}

}  // namespace courier::actors
