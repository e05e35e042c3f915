// radix_tree::check_invariants(): walks the whole tree; for tests and debugging, O(tree size).
#include <stdexcept>
#include <string>
#include <vector>

#include "cache/block_hash.hpp"
#include "cache/radix_node.hpp"
#include "cache/radix_tree.hpp"

namespace courier::cache {
namespace {

[[noreturn]] void violated(const std::string& what) {
  throw std::logic_error("radix_tree invariant: " + what);
}

}  // namespace

void radix_tree::check_invariants() const {
  std::vector<bool> seen(pool_.num_total(), false);
  std::size_t num_blocks = 0;
  std::size_t num_nodes = 0;
  std::size_t num_leaves = 0;
  std::vector<const node*> pending;
  for (const auto& [ns, root] : roots_) {
    if (!root->is_root() || !root->blocks.empty() || !root->tokens.empty()) {
      violated("a root holds blocks or has a parent");
    }
    if (root->base_hash != namespace_hash(ns)) violated("a root's hash is not its namespace's");
    if (root->children.empty()) violated("an empty namespace root was kept");
    pending.push_back(root.get());
  }
  while (!pending.empty()) {
    const node& n = *pending.back();
    pending.pop_back();
    if (!n.is_root()) {
      ++num_nodes;
      if (n.blocks.empty()) violated("a node holds no block");
      if (n.tokens.size() != n.blocks.size() * block_size_) {
        violated("a node's tokens are not whole blocks");
      }
      if (n.key != block_key(n.tokens.data())) violated("a node's key is not its first block's");
      // Each block's chain hash continues its parent's prefix (block_hash.hpp).
      if (n.base_hash != n.parent->end_hash() || n.hashes.size() != n.blocks.size()) {
        violated("a node's chain hashes do not continue its parent's");
      }
      std::uint64_t h = n.base_hash;
      for (std::size_t i = 0; i < n.blocks.size(); ++i) {
        h = chain_hash(h, n.tokens.data() + i * block_size_, block_size_);
        if (n.hashes[i] != h) violated("a block's chain hash is not its prefix's");
      }
      if (!n.parent->is_root() && n.parent->last_used < n.last_used) {
        violated("a node was used more recently than its parent");
      }
    }
    for (block_id b : n.blocks) {
      if (b.value < 0 || static_cast<std::size_t>(b.value) >= seen.size()) {
        violated("unknown block " + std::to_string(b.value));
      }
      const auto i = static_cast<std::size_t>(b.value);
      if (seen[i]) violated("block " + std::to_string(b.value) + " is stored twice");
      seen[i] = true;
      if (!stored_[i]) violated("block " + std::to_string(b.value) + " is not marked stored");
      if (pool_.ref_count(b) < 1) {
        violated("stored block " + std::to_string(b.value) + " holds no reference");
      }
      ++num_blocks;
    }
    if (n.is_leaf()) {
      ++num_leaves;
      const auto it = leaves_.find(n.last_used);
      if (it == leaves_.end() || it->second != &n) violated("a leaf is missing from the LRU");
    }
    for (const auto& [key, child] : n.children) {
      if (child->parent != &n) violated("a child's parent pointer is wrong");
      if (child->key != key) violated("a child is filed under another key");
      const auto same_key = n.children.equal_range(key);
      for (auto it = same_key.first; it != same_key.second; ++it) {
        if (it->second != child && same_block(it->second->tokens.data(), child->tokens.data())) {
          violated("two siblings start with the same block");
        }
      }
      pending.push_back(child.get());
    }
  }
  if (num_leaves != leaves_.size()) violated("the LRU lists a node that is not a leaf");
  if (num_blocks != num_blocks_) violated("the block count is off");
  if (num_nodes != num_nodes_) violated("the node count is off");
  std::size_t num_marked = 0;
  for (bool marked : stored_) num_marked += marked ? 1 : 0;
  if (num_marked != num_blocks_) violated("a block is marked stored but is not in the tree");
}

}  // namespace courier::cache
