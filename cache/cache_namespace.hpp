#pragma once
// The key that separates prefix-cache trees: one root per namespace, and a lookup in one
// namespace never matches blocks stored under another.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace courier::cache {

struct cache_namespace {
  std::uint32_t adapter_id = 0;  // 0: the base model; a LoRA adapter changes every KV value
  std::string isolation_key;     // the tenant under `cache_isolation: tenant`; empty otherwise

  friend bool operator==(const cache_namespace& a, const cache_namespace& b) {
    return a.adapter_id == b.adapter_id && a.isolation_key == b.isolation_key;
  }
  friend bool operator!=(const cache_namespace& a, const cache_namespace& b) { return !(a == b); }
};

// What names an adapter's weights in cache keys: the fingerprint of its files
// (model::lora_adapter::fingerprint) in hex, never the name it is served under, so that another
// adapter loaded later under the same name (or in a later run, over the disk tier) never finds
// the first one's entries.
inline std::string adapter_key(std::uint64_t fingerprint) {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, fingerprint >>= 4) s[static_cast<std::size_t>(i)] = digits[fingerprint & 15];
  return s;
}

// The namespace id of the adapter whose key is `key` (adapter_key; empty: the base model, 0):
// FNV-1a of the key, so that it is the same in every run (the disk tier's keys outlive the
// process) and on every replica (a front end's router hashes prompts as the replicas do). A
// scheduler that finds it taken by another adapter takes the next free value instead.
inline std::uint32_t adapter_namespace_id(const std::string& key) {
  if (key.empty()) return 0;
  std::uint32_t h = 2166136261u;
  for (const char c : key) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return h == 0 ? 1 : h;
}

struct cache_namespace_hash {
  std::size_t operator()(const cache_namespace& ns) const noexcept {
    const std::size_t h = std::hash<std::string>()(ns.isolation_key);
    return h ^ (std::hash<std::uint32_t>()(ns.adapter_id) + 0x9e3779b97f4a7c15ULL + (h << 6) +
                (h >> 2));
  }
};

}  // namespace courier::cache
