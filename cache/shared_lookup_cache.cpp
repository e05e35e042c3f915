#include "cache/shared_lookup_cache.hpp"

#include <stdexcept>
#include <string>

namespace courier::cache {

bool operator==(const lookup_scope& a, const lookup_scope& b) {
  return a.model == b.model && a.tokenizer == b.tokenizer && a.adapter == b.adapter &&
         a.tenant == b.tenant;
}

std::size_t lookup_scope_hash::operator()(const lookup_scope& s) const noexcept {
  std::size_t h = 0;
  for (const std::string* part : {&s.model, &s.tokenizer, &s.adapter, &s.tenant}) {
    // Each part hashed on its own and mixed in order: ("ab", "c") and ("a", "bc") differ.
    h = (h ^ std::hash<std::string>()(*part)) * 0x9e3779b97f4a7c15ULL + 1;
  }
  return h;
}

std::string shared_lookup_config_error(const shared_lookup_config& config) {
  if (config.capacity_bytes == 0 || config.max_scopes == 0) return "";
  const std::size_t share = config.capacity_bytes / config.max_scopes;
  const std::size_t need =
      config.min_scope_tokens * token_store::bytes_per_token + token_store::bytes_per_sequence;
  if (share >= need) return "";
  return "speculative.shared_cache_mb: " + std::to_string(config.capacity_bytes >> 20) +
         " MB over speculative.shared_cache_scopes " + std::to_string(config.max_scopes) +
         " scopes leaves each " + std::to_string(share / 1024) + " KB, less than the " +
         std::to_string((need + 1023) / 1024) + " KB one request of " +
         std::to_string(config.min_scope_tokens) +
         " tokens takes: raise speculative.shared_cache_mb or lower "
         "speculative.shared_cache_scopes (or set shared_cache_mb to 0: no sharing)";
}

shared_lookup_cache::shared_lookup_cache(shared_lookup_config config)
    : config_(config), own_history_(config.ngram) {
  if (config_.max_scopes == 0) throw std::invalid_argument("shared_lookup_cache: 0 scopes");
  const std::string error = shared_lookup_config_error(config_);
  if (!error.empty()) throw std::invalid_argument(error);
}

shared_lookup_cache::scope_entry* shared_lookup_cache::touch(const lookup_scope& scope) {
  const auto it = scopes_.find(scope);
  if (it == scopes_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second.lru_position);
  return &it->second;
}

void shared_lookup_cache::add(const lookup_scope& scope, token_span tokens) {
  if (!enabled() || scope.tenant.empty() || tokens.empty()) return;
  scope_entry* entry = touch(scope);
  if (entry == nullptr) {
    if (scopes_.size() == config_.max_scopes) {
      scopes_.erase(lru_.back());
      lru_.pop_back();
    }
    lru_.push_front(scope);
    entry =
        &scopes_
             .emplace(scope, scope_entry{token_store(config_.ngram, share_bytes()), lru_.begin()})
             .first->second;
  }
  entry->store.add(tokens);
}

std::vector<token_id> shared_lookup_cache::propose(const lookup_scope& scope, token_span history,
                                                   std::size_t max_len, proposal_source* source) {
  if (source) *source = proposal_source::none;
  std::vector<token_id> draft = own_history_.propose(history, max_len);
  if (!draft.empty()) {
    if (source) *source = proposal_source::own;
    return draft;
  }
  if (scope.tenant.empty()) return draft;
  scope_entry* entry = touch(scope);
  if (entry == nullptr) return draft;
  draft = entry->store.propose(history, max_len);
  if (source && !draft.empty()) *source = proposal_source::shared;
  return draft;
}

const token_store* shared_lookup_cache::find(const lookup_scope& scope) const {
  const auto it = scopes_.find(scope);
  return it == scopes_.end() ? nullptr : &it->second.store;
}

std::size_t shared_lookup_cache::size_bytes() const {
  std::size_t total = 0;
  for (const auto& [scope, entry] : scopes_) total += entry.store.size_bytes();
  return total;
}

void shared_lookup_cache::check_invariants() const {
  auto violated = [](const char* what) {
    throw std::logic_error(std::string("shared_lookup_cache invariant: ") + what);
  };
  if (scopes_.size() != lru_.size()) violated("the LRU and the scopes disagree");
  if (scopes_.size() > config_.max_scopes) violated("too many scopes");
  for (const lookup_scope& scope : lru_) {
    const auto it = scopes_.find(scope);
    if (it == scopes_.end() || !(*it->second.lru_position == scope)) {
      violated("an LRU entry does not point at its scope");
    }
    if (scope.tenant.empty()) violated("a scope without a tenant");
    if (it->second.store.capacity_bytes() != share_bytes()) violated("a store's share is off");
    it->second.store.check_invariants();
  }
  if (size_bytes() > config_.capacity_bytes) violated("over capacity");
}

}  // namespace courier::cache
