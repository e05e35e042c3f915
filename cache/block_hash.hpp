#pragma once
// Chain hashes of stored prefixes: the hash of a prefix of whole blocks is a fold of its
// namespace and each block's tokens, so it names (namespace, every token up to the block's end)
// and is computed in O(block_size) from its parent's. The radix tree keeps one per stored block;
// the KV host and disk tiers are keyed by them (a block evicted from the device is found again by
// the same prefix). Defined here bit for bit (no std::hash), so the same prefix has the same hash
// in every run: the disk tier's persisted blocks are found by it after a restart.
#include <cstddef>
#include <cstdint>

#include "cache/cache_namespace.hpp"
#include "cache/types.hpp"

namespace courier::cache {

inline std::uint64_t mix64(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The chain hash of a namespace's empty prefix: its adapter id and isolation key's bytes.
inline std::uint64_t namespace_hash(const cache_namespace& ns) {
  std::uint64_t h = mix64(0x636f757269657221ULL ^ ns.adapter_id);
  for (const char c : ns.isolation_key) h = mix64(h ^ static_cast<unsigned char>(c));
  return mix64(h ^ ns.isolation_key.size());
}

// The chain hash of the prefix `prev` names followed by one block of n tokens.
inline std::uint64_t chain_hash(std::uint64_t prev, const token_id* block, std::size_t n) {
  std::uint64_t h = mix64(prev);
  for (std::size_t i = 0; i < n; ++i) h = mix64(h ^ block[i]);
  return h;
}

}  // namespace courier::cache
