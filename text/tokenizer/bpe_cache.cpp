#include "text/tokenizer/bpe_cache.hpp"

#include <cstring>

namespace courier::text {

namespace {

std::uint64_t mix(std::uint64_t h) {
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDULL;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ULL;
  h ^= h >> 33;
  return h;
}

std::uint64_t make_meta(std::uint64_t hash, std::size_t len, std::size_t num_ids) {
  return (hash & ~std::uint64_t{0xFFFF}) | (std::uint64_t{len} << 8) | num_ids;
}

}  // namespace

std::uint64_t hash_bytes(std::string_view s) {
  std::uint64_t h = 0x9E3779B97F4A7C15ULL ^ s.size();
  const char* p = s.data();
  std::size_t n = s.size();
  while (n >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    h = mix(h ^ w);
    p += 8;
    n -= 8;
  }
  std::uint64_t w = 0;
  if (n != 0) std::memcpy(&w, p, n);
  return mix(h ^ w ^ (std::uint64_t{n} << 59));
}

bpe_cache::bpe_cache() : slots_(new slot[num_slots]) {}

bool bpe_cache::find(std::string_view word, std::uint64_t hash,
                     std::vector<std::uint32_t>& out) const {
  if (word.size() > max_word_bytes) return false;
  slot& s = slots_[hash & (num_slots - 1)];
  const std::uint64_t v1 = s.version.load(std::memory_order_acquire);
  if (v1 & 1) return false;
  // Acquire loads of the fields (plain loads on x86) keep the second version read after
  // them; if any field came from a newer write, that write's version bump is seen too.
  const std::uint64_t meta = s.meta.load(std::memory_order_acquire);
  if ((meta & ~std::uint64_t{0xFF}) != (make_meta(hash, word.size(), 0))) return false;
  std::uint64_t key[2] = {s.key[0].load(std::memory_order_acquire),
                          s.key[1].load(std::memory_order_acquire)};
  std::uint64_t ids[4];
  for (int i = 0; i < 4; ++i) ids[i] = s.ids[i].load(std::memory_order_acquire);
  if (s.version.load(std::memory_order_relaxed) != v1) return false;
  std::uint64_t want[2] = {0, 0};
  std::memcpy(want, word.data(), word.size());
  if (key[0] != want[0] || key[1] != want[1]) return false;
  const std::size_t num_ids = meta & 0xFF;
  std::uint32_t unpacked[max_ids];
  std::memcpy(unpacked, ids, sizeof unpacked);
  out.insert(out.end(), unpacked, unpacked + num_ids);
  return true;
}

void bpe_cache::insert(std::string_view word, std::uint64_t hash, const std::uint32_t* ids,
                       std::size_t num_ids) const {
  if (word.size() > max_word_bytes || num_ids > max_ids || num_ids == 0) return;
  slot& s = slots_[hash & (num_slots - 1)];
  std::uint64_t v = s.version.load(std::memory_order_relaxed);
  if ((v & 1) || !s.version.compare_exchange_strong(v, v + 1, std::memory_order_acquire)) return;
  // Release stores (plain stores on x86): a reader that sees one also sees the odd version.
  std::uint64_t key[2] = {0, 0};
  std::memcpy(key, word.data(), word.size());
  std::uint32_t packed[max_ids] = {};
  std::memcpy(packed, ids, num_ids * sizeof(std::uint32_t));
  std::uint64_t words[4];
  std::memcpy(words, packed, sizeof words);
  s.meta.store(make_meta(hash, word.size(), num_ids), std::memory_order_release);
  s.key[0].store(key[0], std::memory_order_release);
  s.key[1].store(key[1], std::memory_order_release);
  for (int i = 0; i < 4; ++i) s.ids[i].store(words[i], std::memory_order_release);
  s.version.store(v + 2, std::memory_order_release);
}

}  // namespace courier::text
