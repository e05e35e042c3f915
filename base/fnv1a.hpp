#pragma once
// FNV-1a 64 over a sequence of byte strings, each followed by its length (so ("ab", "c") and
// ("a", "bc") differ): the fingerprints of what a cache entry depends on (a model folder's files,
// an adapter's files). Not a cryptographic hash: it tells versions of one's own files apart.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace courier::base {

class fnv1a64 {
 public:
  void add(const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) h_ = (h_ ^ p[i]) * 0x100000001b3ULL;
    h_ ^= n;
    h_ *= 0x100000001b3ULL;
  }
  void add(std::string_view s) { add(s.data(), s.size()); }
  void add(std::uint64_t v) { add(&v, sizeof v); }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

}  // namespace courier::base
