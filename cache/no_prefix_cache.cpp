#include "cache/no_prefix_cache.hpp"

namespace courier::cache {

prefix_match no_prefix_cache::lookup(const cache_namespace&, token_span tokens) {
  ++counters_.num_misses;
  counters_.num_query_tokens += tokens.size();
  return prefix_match({}, block_size_, tokens.size(), prefix_match::origin::lookup);
}

prefix_match no_prefix_cache::pin_prefix(const cache_namespace&, token_span tokens) {
  return prefix_match({}, block_size_, tokens.size(), prefix_match::origin::pin);
}

void no_prefix_cache::release_matched(prefix_match match) {
  if (match.drop() && match.from() == prefix_match::origin::lookup) {
    --counters_.num_misses;
    counters_.num_query_tokens -= match.num_query_tokens();
  }
}

insert_result no_prefix_cache::insert(const cache_namespace&, token_span, block_refs&,
                                      std::size_t) {
  // Stores nothing, so the table keeps every reference and there is nothing to check: a
  // scheduler that counts its inserted blocks as matched can run on this unchanged.
  return {};
}

}  // namespace courier::cache
