#include "cache/radix_tree.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "cache/block_hash.hpp"
#include "cache/radix_node.hpp"

namespace courier::cache {

radix_tree::radix_tree(block_pool& pool, std::size_t block_size)
    : pool_(pool), block_size_(block_size), stored_(pool.num_total(), false) {
  if (block_size == 0) throw std::invalid_argument("radix_tree: block size 0");
}

radix_tree::~radix_tree() {
  // Iterative, so that a long chain of nodes cannot overflow the stack.
  std::vector<std::unique_ptr<node>> pending;
  for (auto& [ns, root] : roots_) pending.push_back(std::move(root));
  while (!pending.empty()) {
    std::unique_ptr<node> n = std::move(pending.back());
    pending.pop_back();
    for (block_id b : n->blocks) pool_.dec_ref(b);
    for (auto& [key, child] : n->children) pending.push_back(std::move(child));
  }
}

std::uint64_t radix_tree::block_key(const token_id* first_block) const {
  std::uint64_t h = 0x243f6a8885a308d3ULL;
  for (std::size_t i = 0; i < block_size_; ++i) {
    h = (h ^ first_block[i]) * 0x9e3779b97f4a7c15ULL;
    h ^= h >> 29;
  }
  return h;
}

bool radix_tree::same_block(const token_id* a, const token_id* b) const {
  return std::equal(a, a + block_size_, b);
}

radix_tree::node* radix_tree::find_root(const cache_namespace& ns) const {
  const auto it = roots_.find(ns);
  return it == roots_.end() ? nullptr : it->second.get();
}

radix_tree::node* radix_tree::find_child(const node& parent, const token_id* first_block) const {
  const auto range = parent.children.equal_range(block_key(first_block));
  for (auto it = range.first; it != range.second; ++it) {
    if (same_block(it->second->tokens.data(), first_block)) return it->second.get();
  }
  return nullptr;
}

radix_tree::walk_end radix_tree::walk(node* root, token_span tokens,
                                      std::vector<block_id>* out) const {
  const std::size_t num_full = tokens.size() / block_size_;
  walk_end end{root, 0, 0};
  while (end.matched < num_full) {
    if (end.offset == end.at->blocks.size()) {  // always so at a root
      node* child = find_child(*end.at, tokens.data() + end.matched * block_size_);
      if (child == nullptr) break;
      end = {child, 0, end.matched};
    }
    const node& n = *end.at;
    if (!same_block(n.tokens.data() + end.offset * block_size_,
                    tokens.data() + end.matched * block_size_)) {
      break;
    }
    if (out != nullptr) out->push_back(n.blocks[end.offset]);
    ++end.offset;
    ++end.matched;
  }
  return end;
}

std::size_t radix_tree::peek_matched_tokens(const cache_namespace& ns, token_span tokens) const {
  node* root = find_root(ns);
  return root == nullptr ? 0 : walk(root, tokens, nullptr).matched * block_size_;
}

prefix_match radix_tree::lookup(const cache_namespace& ns, token_span tokens) {
  prefix_match m = match(ns, tokens, prefix_match::origin::lookup);
  ++(m.num_tokens() > 0 ? counters_.num_hits : counters_.num_misses);
  counters_.num_hit_tokens += m.num_tokens();
  counters_.num_query_tokens += tokens.size();
  return m;
}

prefix_match radix_tree::pin_prefix(const cache_namespace& ns, token_span tokens) {
  return match(ns, tokens, prefix_match::origin::pin);
}

prefix_match radix_tree::match(const cache_namespace& ns, token_span tokens,
                               prefix_match::origin from) {
  std::vector<block_id> blocks;
  if (node* root = find_root(ns)) {
    const walk_end end = walk(root, tokens, &blocks);
    if (end.matched > 0) {
      // Split where the match ends, so that the unmatched rest keeps its older LRU time.
      if (end.offset < end.at->blocks.size()) split(*end.at, end.offset);
      touch_path(end.at, ++clock_);
    }
  }
  return prefix_match(block_refs::share(pool_, blocks), block_size_, tokens.size(), from);
}

void radix_tree::release_matched(prefix_match match) {
  const bool rolled_back = match.drop();
  if (!rolled_back || match.from() != prefix_match::origin::lookup) return;
  --(match.num_tokens() > 0 ? counters_.num_hits : counters_.num_misses);
  counters_.num_hit_tokens -= match.num_tokens();
  counters_.num_query_tokens -= match.num_query_tokens();
}

insert_result radix_tree::insert(const cache_namespace& ns, token_span tokens, block_refs& table,
                                 std::size_t num_matched_tokens) {
  const std::size_t num_full = tokens.size() / block_size_;
  if (num_matched_tokens % block_size_ != 0 || num_matched_tokens > num_full * block_size_) {
    throw std::invalid_argument("radix_tree::insert: matched tokens " +
                                std::to_string(num_matched_tokens) +
                                " is not a whole number of the sequence's full blocks");
  }
  if (table.size() < num_full) {
    throw std::invalid_argument("radix_tree::insert: the block table is shorter than the tokens");
  }
  if (!table.empty() && table.pool() != &pool_) {
    throw std::invalid_argument("radix_tree::insert: the block table is from another pool");
  }
  insert_result result;
  if (num_full == 0) return result;

  // Check everything before changing anything.
  node* root = find_root(ns);
  std::vector<block_id> cached;
  walk_end end = root != nullptr ? walk(root, tokens, &cached) : walk_end{};
  for (std::size_t i = 0; i < num_matched_tokens / block_size_; ++i) {
    if (i >= end.matched || cached[i] != table[i]) {
      throw std::invalid_argument("radix_tree::insert: table entry " + std::to_string(i) +
                                  " is inside the lookup match but is not the cache's block");
    }
  }
  // The blocks to store must not be stored already, nor twice: mark them, then unmark.
  std::size_t num_marked = end.matched;
  for (; num_marked < num_full; ++num_marked) {
    const auto b = static_cast<std::size_t>(table[num_marked].value);
    if (stored_[b]) break;
    stored_[b] = true;
  }
  for (std::size_t i = end.matched; i < num_marked; ++i) {
    stored_[static_cast<std::size_t>(table[i].value)] = false;
  }
  if (num_marked < num_full) {
    throw std::invalid_argument("radix_tree::insert: block " +
                                std::to_string(table[num_marked].value) + " would be stored twice");
  }

  if (root == nullptr) {
    auto created = std::make_unique<node>();
    created->base_hash = namespace_hash(ns);
    root = created.get();
    roots_.emplace(ns, std::move(created));
    end = {root, 0, 0};
  }
  if (end.offset < end.at->blocks.size()) split(*end.at, end.offset);
  result.stored.reserve(num_full - end.matched);
  node* deepest = end.at;
  if (end.matched < num_full) {
    deepest = attach(*end.at, tokens, table, end.matched, num_full, result);
    if (events_) {  // the new blocks are the last of `deepest`'s
      cache_event e;
      const std::size_t n = num_full - end.matched, have = deepest->hashes.size();
      e.hashes.assign(deepest->hashes.end() - static_cast<std::ptrdiff_t>(n),
                      deepest->hashes.end());
      if (end.matched > 0) e.parent = have > n ? deepest->hashes[have - n - 1] : deepest->base_hash;
      e.tokens.assign(tokens.data() + end.matched * block_size_,
                      tokens.data() + num_full * block_size_);
      e.block_size = static_cast<std::uint32_t>(block_size_);
      e.adapter_id = ns.adapter_id;
      events_->push_back(std::move(e));
    }
  }
  for (std::size_t i = 0; i < end.matched; ++i) {
    if (table[i] == cached[i]) continue;
    result.followed.push_back({i, table[i], cached[i]});
    table.replace(i, cached[i]);
  }
  touch_path(deepest, ++clock_);
  return result;
}

radix_tree::node* radix_tree::attach(node& parent, token_span tokens, const block_refs& table,
                                     std::size_t first, std::size_t last, insert_result& result) {
  node* target = &parent;
  if (!parent.is_leaf()) {
    auto child = std::make_unique<node>();
    target = child.get();
    child->parent = &parent;
    child->key = block_key(tokens.data() + first * block_size_);
    child->base_hash = parent.end_hash();
    child->last_used = clock_ + 1;  // the caller touches the path at this time
    parent.children.emplace(child->key, std::move(child));
    ++num_nodes_;
    add_leaf(*target);
  }
  target->tokens.insert(target->tokens.end(), tokens.data() + first * block_size_,
                        tokens.data() + last * block_size_);
  for (std::size_t i = first; i < last; ++i) {
    target->hashes.push_back(
        chain_hash(target->end_hash(), tokens.data() + i * block_size_, block_size_));
    pool_.inc_ref(table[i]);
    target->blocks.push_back(table[i]);
    stored_[static_cast<std::size_t>(table[i].value)] = true;
    result.stored.push_back(table[i]);
  }
  num_blocks_ += last - first;
  return target;
}

void radix_tree::split(node& n, std::size_t offset) {
  auto tail = std::make_unique<node>();
  tail->parent = &n;
  tail->tokens.assign(n.tokens.begin() + static_cast<std::ptrdiff_t>(offset * block_size_),
                      n.tokens.end());
  tail->blocks.assign(n.blocks.begin() + static_cast<std::ptrdiff_t>(offset), n.blocks.end());
  tail->hashes.assign(n.hashes.begin() + static_cast<std::ptrdiff_t>(offset), n.hashes.end());
  tail->base_hash = offset > 0 ? n.hashes[offset - 1] : n.base_hash;
  tail->key = block_key(tail->tokens.data());
  tail->last_used = n.last_used;
  tail->children = std::move(n.children);
  n.children.clear();
  for (auto& [key, child] : tail->children) child->parent = tail.get();
  n.tokens.resize(offset * block_size_);
  n.blocks.resize(offset);
  n.hashes.resize(offset);
  const bool was_leaf = tail->children.empty();
  if (was_leaf) leaves_.erase(n.last_used);
  node& added = *tail;
  n.children.emplace(tail->key, std::move(tail));
  ++num_nodes_;
  if (was_leaf) add_leaf(added);
}

void radix_tree::touch_path(node* deepest, std::uint64_t now) {
  for (node* n = deepest; n != nullptr; n = n->parent) set_last_used(*n, now);
}

void radix_tree::set_last_used(node& n, std::uint64_t now) {
  if (n.is_leaf()) leaves_.erase(n.last_used);
  n.last_used = now;
  if (n.is_leaf()) add_leaf(n);
}

void radix_tree::add_leaf(node& n) {
  if (!leaves_.emplace(n.last_used, &n).second) {
    throw std::logic_error("radix_tree: two leaves with LRU time " + std::to_string(n.last_used));
  }
}

std::vector<block_id> radix_tree::evict(std::size_t num_blocks) {
  std::vector<block_id> evicted;
  cache_event removed;
  removed.what = cache_event::kind::removed;
  std::uint64_t cursor = 0;  // leaves older than this hold a block someone else also holds
  while (evicted.size() < num_blocks) {
    const auto it = leaves_.lower_bound(cursor);
    if (it == leaves_.end()) break;
    node& leaf = *it->second;
    cursor = it->first;
    while (evicted.size() < num_blocks && !leaf.blocks.empty() &&
           pool_.ref_count(leaf.blocks.back()) == 1) {
      const block_id b = leaf.blocks.back();
      if (on_evict_) {
        const std::size_t n = leaf.blocks.size();
        on_evict_(b, leaf.hashes.back(), n > 1 ? leaf.hashes[n - 2] : leaf.base_hash,
                  leaf.tokens.data() + (n - 1) * block_size_);
      }
      if (events_) removed.hashes.push_back(leaf.hashes.back());
      leaf.blocks.pop_back();
      leaf.hashes.pop_back();
      leaf.tokens.resize(leaf.blocks.size() * block_size_);
      stored_[static_cast<std::size_t>(b.value)] = false;
      --num_blocks_;
      pool_.dec_ref(b);
      evicted.push_back(b);
    }
    if (leaf.blocks.empty()) {
      leaves_.erase(it);
      remove_empty_leaf(leaf);  // its parent may now be a leaf, at a time >= cursor
    } else {
      ++cursor;  // pinned (or done)
    }
  }
  counters_.num_evicted_blocks += evicted.size();
  if (events_ && !removed.hashes.empty()) events_->push_back(std::move(removed));
  return evicted;
}

void radix_tree::remove_empty_leaf(node& leaf) {
  node& parent = *leaf.parent;
  const auto range = parent.children.equal_range(leaf.key);
  for (auto it = range.first; it != range.second; ++it) {
    if (it->second.get() == &leaf) {
      parent.children.erase(it);  // destroys leaf
      break;
    }
  }
  --num_nodes_;
  if (!parent.children.empty()) return;
  if (!parent.is_root()) {
    add_leaf(parent);
    return;
  }
  for (auto it = roots_.begin(); it != roots_.end(); ++it) {
    if (it->second.get() == &parent) {
      roots_.erase(it);
      return;
    }
  }
}

prefix_cache_stats radix_tree::stats() const {
  prefix_cache_stats s = counters_;
  s.num_blocks = num_blocks_;
  s.num_nodes = num_nodes_;
  s.num_namespaces = roots_.size();
  return s;
}

void radix_tree::snapshot_events(cache_event_log& log) const {
  cache_event cleared;
  cleared.what = cache_event::kind::cleared;
  log.push_back(std::move(cleared));
  for (const auto& [ns, root] : roots_) {
    std::vector<const node*> stack;
    for (const auto& [key, child] : root->children) stack.push_back(child.get());
    while (!stack.empty()) {
      const node* n = stack.back();
      stack.pop_back();
      cache_event e;
      e.hashes = n->hashes;
      if (!n->parent->is_root()) e.parent = n->base_hash;
      e.tokens = n->tokens;
      e.block_size = static_cast<std::uint32_t>(block_size_);
      e.adapter_id = ns.adapter_id;
      log.push_back(std::move(e));
      for (const auto& [key, child] : n->children) stack.push_back(child.get());
    }
  }
}

}  // namespace courier::cache
