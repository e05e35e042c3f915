#include "actors/scheduler/kv_manager.hpp"

#include <map>

#include "cache/block_pool.hpp"
#include "cache/no_prefix_cache.hpp"
#include "cache/radix_tree.hpp"

namespace courier::actors {

// Declaration order is destruction order reversed: the prefix cache drops its references
// before the pool goes.
struct kv_manager::impl {
  cache::block_pool pool;
  std::unique_ptr<cache::prefix_cache> prefix;
  std::map<std::string, std::uint32_t> adapter_ids;  // adapter name -> namespace id (0: base)

  impl(std::int32_t num_blocks, std::int32_t block_size, bool prefix_caching) : pool(num_blocks) {
    if (prefix_caching) {
      prefix = std::make_unique<cache::radix_tree>(pool, static_cast<std::size_t>(block_size));
    } else {
      prefix = std::make_unique<cache::no_prefix_cache>(static_cast<std::size_t>(block_size));
    }
  }

  cache::cache_namespace ns_of(const prefix_namespace& ns) {
    std::uint32_t id = 0;
    if (!ns.adapter.empty()) {
      auto it = adapter_ids.emplace(ns.adapter, static_cast<std::uint32_t>(adapter_ids.size() + 1));
      id = it.first->second;
    }
    return {id, ns.isolation_key};
  }
};

kv_manager::kv_manager(std::int32_t num_blocks, std::int32_t block_size, bool prefix_caching)
    : num_blocks_(num_blocks),
      block_size_(block_size),
      impl_(std::make_unique<impl>(num_blocks, block_size, prefix_caching)) {}

kv_manager::~kv_manager() = default;

std::int32_t kv_manager::num_free() const {
  return static_cast<std::int32_t>(impl_->pool.num_free());
}

std::int32_t kv_manager::num_cached() const {
  return static_cast<std::int32_t>(impl_->prefix->stats().num_blocks);
}

cache::prefix_match kv_manager::lookup(const prefix_namespace& ns,
                                       const std::vector<msg::token_id>& tokens,
                                       std::int32_t max_tokens) {
  const cache::token_span span = cache::token_span(tokens).first(
      static_cast<std::size_t>(std::max(0, max_tokens)));
  return impl_->prefix->lookup(impl_->ns_of(ns), span);
}

void kv_manager::take(cache::prefix_match& match, cache::block_refs& table) {
  table.append(match.take_blocks());
}

void kv_manager::release_matched(cache::prefix_match match) {
  impl_->prefix->release_matched(std::move(match));
}

std::optional<cache::block_refs> kv_manager::allocate(std::int32_t n) {
  if (n <= 0) return cache::block_refs{};
  const auto want = static_cast<std::size_t>(n);
  if (impl_->pool.num_free() < want) {
    (void)impl_->prefix->evict(want - impl_->pool.num_free());
  }
  return cache::block_refs::allocate(impl_->pool, want);
}

void kv_manager::insert(const prefix_namespace& ns, const std::vector<msg::token_id>& tokens,
                        cache::block_refs& table, std::int32_t num_full_blocks,
                        std::int32_t num_cached_tokens) {
  if (num_full_blocks <= 0) return;
  const auto n = static_cast<std::size_t>(num_full_blocks) * static_cast<std::size_t>(block_size_);
  (void)impl_->prefix->insert(impl_->ns_of(ns), cache::token_span(tokens).first(n), table,
                              static_cast<std::size_t>(num_cached_tokens));
}

void kv_manager::truncate(cache::block_refs& table, std::int32_t n) {
  table.truncate(static_cast<std::size_t>(std::max(0, n)));
}

void kv_manager::release(cache::block_refs& table) { impl_->prefix->release(std::move(table)); }

void kv_manager::evict_all() { (void)impl_->prefix->evict(impl_->pool.num_total()); }

void kv_manager::check_invariants() const {
  impl_->pool.check_invariants();
  impl_->prefix->check_invariants();
}


}  // namespace courier::actors
