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

// The namespace id of the adapter `name` (0 is the base model's): FNV-1a of the name, so that
// it is the same in every run (the disk tier's keys outlive the process) and on every replica (a
// front end's router hashes prompts as the replicas do). A scheduler that finds it taken by
// another adapter takes the next free value instead.
inline std::uint32_t adapter_namespace_id(const std::string& name) {
  if (name.empty()) return 0;
  std::uint32_t h = 2166136261u;
  for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
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
