#pragma once
// Prompt-lookup speculative decoding on the scheduler's side (speculative.* in the config; the
// README's "Prompt-lookup speculative decoding"): drafts for a decoding sequence from its own
// history, else from its scope's store of finished requests (cache::shared_lookup_cache); each
// verified row counted and the sequence's draft length adapted (draft_state); a finished
// request's tokens stored for its scope's later requests. Which rows get drafts, and how much
// room they have in a step, is the scheduler core's choice.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "actors/scheduler/sequence.hpp"
#include "cache/shared_lookup_cache.hpp"
#include "messages/messages.hpp"
#include "messages/step.hpp"

namespace courier::actors {

// The shared lookup cache's scope of a request for `adapter` (empty: the base model) from
// `tenant`: the fingerprints of the weights and the tokenizer that were loaded (not the served
// name, which two different models or tokenizers may have), the adapter's key
// (lora_admission::cache_key: its fingerprint, not its name) and the tenant.
cache::lookup_scope lookup_scope_of(const msg::engine_ready& ready, const std::string& adapter,
                                    const std::string& tenant);

// speculative.* in the config.
struct prompt_lookup_options {
  bool enabled = false;
  std::int32_t num_draft = 4;          // most drafts per row
  cache::shared_lookup_config shared;  // capacity 0: own history only
};

class prompt_lookup {
 public:
  // `stats`: the scheduler's, whose spec_* counters this counts into; it outlives this.
  prompt_lookup(const prompt_lookup_options& opts, msg::scheduler_stats& stats)
      : opts_(opts), stats_(stats), cache_(opts.shared) {}

  bool enabled() const { return opts_.enabled; }
  // Whether s searches at its next decode step (on, and its searches not paused).
  bool due(const sequence& s) const { return opts_.enabled && s.drafts.due(); }
  // Up to s's draft length of drafts, never past its max_total, within `budget` tokens for the
  // row (its own token and the drafts); none for a penalised sequence (penalties change between
  // positions, which one verification row cannot follow). `scope` is called only when a search
  // runs (a scope's strings cost more than most rows' planning). `source`: whose history
  // answered.
  std::vector<msg::token_id> propose(sequence& s, const std::function<cache::lookup_scope()>& scope,
                                     std::int32_t budget, cache::proposal_source& source);
  // A row of s verified `accepted` of its `drafted` drafts from `source`: counted (own history
  // or shared), and s's next draft length adapted.
  void verified(sequence& s, std::int32_t drafted, std::int32_t accepted,
                cache::proposal_source source);
  // s finished with a stop or length finish: its tokens stored for `scope`'s later requests.
  void store(const sequence& s, const cache::lookup_scope& scope);
  const cache::shared_lookup_cache& cache() const { return cache_; }

 private:
  prompt_lookup_options opts_;
  msg::scheduler_stats& stats_;
  cache::shared_lookup_cache cache_;
};

}  // namespace courier::actors
