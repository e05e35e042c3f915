#include "actors/scheduler/prompt_lookup.hpp"

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

std::vector<msg::token_id> prompt_lookup::propose(sequence& s,
                                                  const std::function<cache::lookup_scope()>& scope,
                                                  std::int32_t budget,
                                                  cache::proposal_source& source) {
  source = cache::proposal_source::none;
  if (!opts_.enabled || s.penalised()) return {};
  const std::int32_t room = s.max_total - static_cast<std::int32_t>(s.tokens.size()) - 1;
  const std::int32_t k = s.drafts.want(opts_.num_draft, std::min(room, budget - 1));
  if (k <= 0) return {};
  auto drafts =
      cache_.propose(scope(), cache::token_span(s.tokens), static_cast<std::size_t>(k), &source);
  s.drafts.searched(!drafts.empty());
  return drafts;
}

void prompt_lookup::verified(sequence& s, std::int32_t drafted, std::int32_t accepted,
                             cache::proposal_source source) {
  const bool own = source == cache::proposal_source::own;
  ++stats_.spec_drafts;
  if (!own) ++stats_.spec_drafts_shared;
  const auto d = static_cast<std::uint64_t>(drafted), a = static_cast<std::uint64_t>(accepted);
  (own ? stats_.spec_draft_tokens_own : stats_.spec_draft_tokens_shared) += d;
  (own ? stats_.spec_accepted_own : stats_.spec_accepted_shared) += a;
  s.drafts.verified(opts_.num_draft, drafted, accepted);
}

void prompt_lookup::store(const sequence& s, const cache::lookup_scope& scope) {
  if (opts_.enabled) cache_.add(scope, cache::token_span(s.tokens));
}

}  // namespace courier::actors
