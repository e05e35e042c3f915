#pragma once
// A node of radix_tree (private to radix_tree*.cpp; not part of the cache's interface).
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "cache/radix_tree.hpp"

namespace courier::cache {

struct radix_tree::node {
  node* parent = nullptr;        // Borrowed; null for a root
  std::uint64_t key = 0;         // hash of the first block's tokens: the key in parent's children
  std::vector<token_id> tokens;  // blocks.size() * block_size tokens
  std::vector<block_id> blocks;  // the tree holds one reference on each
  // Chain hashes (block_hash.hpp): of the prefix before this node's first block, and of the
  // prefix up to the end of each of its blocks.
  std::uint64_t base_hash = 0;
  std::vector<std::uint64_t> hashes;
  std::uint64_t end_hash() const { return hashes.empty() ? base_hash : hashes.back(); }
  std::unordered_multimap<std::uint64_t, std::unique_ptr<node>> children;  // Owned, by key
  std::uint64_t last_used = 0;  // LRU time; never older than any descendant's

  bool is_root() const { return parent == nullptr; }
  bool is_leaf() const { return parent != nullptr && children.empty(); }
};

}  // namespace courier::cache
