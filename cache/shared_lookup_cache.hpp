#pragma once
// The shared lookup cache for prompt-lookup speculative decoding: per scope, the tokens of
// earlier finished requests, so that a request can draft from what its tenant asked before.
// Drafts are only proposals (verification decides what is emitted), so this never changes an
// output; what it must never do is let one scope see, change or push out another's tokens.
#include <cstddef>
#include <functional>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/ngram_proposer.hpp"
#include "cache/token_store.hpp"
#include "cache/types.hpp"

namespace courier::cache {

// Where a proposal came from (the metrics count them apart).
enum class proposal_source : std::uint8_t { none, own, shared };

// Who may share tokens: the same model, tokenizer, adapter and tenant.
struct lookup_scope {
  std::string model;
  std::string tokenizer;
  std::string adapter;  // empty: the base model
  std::string tenant;   // empty: no tenant, so no sharing at all
};

bool operator==(const lookup_scope& a, const lookup_scope& b);

struct lookup_scope_hash {
  std::size_t operator()(const lookup_scope& s) const noexcept;
};

struct shared_lookup_config {
  std::size_t capacity_bytes = 0;  // speculative.shared_cache_mb in bytes; 0 turns sharing off
  std::size_t max_scopes = 4;      // speculative.shared_cache_scopes
  ngram_config ngram;              // speculative.prompt_lookup.{min,max}_ngram
  // The fewest tokens a scope's share must hold to be worth having (one request of this many);
  // a smaller share is refused (tests of eviction lower it).
  std::size_t min_scope_tokens = 1024;
};

// Empty when `config` can be used: sharing off (capacity 0), or each scope's share holds one
// request of min_scope_tokens. Otherwise why not, naming speculative.shared_cache_mb and
// speculative.shared_cache_scopes (a share too small would store nothing useful, silently).
std::string shared_lookup_config_error(const shared_lookup_config& config);

// Bounds: each scope may use capacity_bytes / max_scopes (its share), and at most max_scopes
// scopes exist. A scope over its share drops its own oldest sequences; a new scope beyond
// max_scopes drops the least recently used scope whole. No other path removes tokens, so a
// scope never reads, overwrites or evicts another's (the LRU drop aside).
//
// Invariants: scopes_.size() == lru_.size() <= max_scopes; each store within its share (so
// size_bytes() <= capacity_bytes); no scope has an empty tenant.
class shared_lookup_cache {
 public:
  // Throws std::invalid_argument with shared_lookup_config_error's reason, or for 0 scopes.
  explicit shared_lookup_cache(shared_lookup_config config);

  const shared_lookup_config& config() const { return config_; }
  bool enabled() const { return share_bytes() > 0; }
  std::size_t share_bytes() const { return config_.capacity_bytes / config_.max_scopes; }

  // Stores a finished request's prompt and output tokens in its scope (creating the scope,
  // which may drop the least recently used one). Nothing when off or without a tenant.
  void add(const lookup_scope& scope, token_span tokens);

  // Drafts up to max_len tokens for a sequence whose tokens so far are `history`: from its own
  // history first (ngram_proposer), else from its scope's store (touching the scope's LRU
  // time). Empty when neither has a match. source (optional) says which one answered.
  std::vector<token_id> propose(const lookup_scope& scope, token_span history, std::size_t max_len,
                                proposal_source* source = nullptr);

  bool contains(const lookup_scope& scope) const { return scopes_.count(scope) != 0; }
  // The scope's store, or null; for tests and stats.
  const token_store* find(const lookup_scope& scope) const;
  std::size_t num_scopes() const { return scopes_.size(); }
  std::size_t size_bytes() const;

  // Throws std::logic_error describing the first violated invariant. O(cache size).
  void check_invariants() const;

 private:
  struct scope_entry {
    token_store store;
    std::list<lookup_scope>::iterator lru_position;
  };

  scope_entry* touch(const lookup_scope& scope);

  shared_lookup_config config_;
  ngram_proposer own_history_;
  std::list<lookup_scope> lru_;  // most recently used first
  std::unordered_map<lookup_scope, scope_entry, lookup_scope_hash> scopes_;
};

}  // namespace courier::cache
