#include "text/tokenizer/normalizer.hpp"

#include <utf8proc.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "text/tokenizer/utf8.hpp"

namespace courier::text {

namespace {

constexpr char32_t num_code_points = 0x110000;

// One bit per code point: set when the code point may change a string under NFC.
// Built once from utf8proc's tables (a few milliseconds).
class nfc_unsafe_set {
 public:
  nfc_unsafe_set() : bits_(num_code_points / 64, 0) {
    for (char32_t cp = 0x300; cp < num_code_points; ++cp) {
      if (unsafe(cp)) bits_[cp / 64] |= std::uint64_t{1} << (cp % 64);
    }
  }
  bool contains(char32_t cp) const { return (bits_[cp / 64] >> (cp % 64)) & 1; }

 private:
  static bool unsafe(char32_t cp) {
    const auto* p = utf8proc_get_property(static_cast<utf8proc_int32_t>(cp));
    if (p->combining_class != 0) return true;
    // utf8proc marks a code point that can be the second of a pair with bit 15 of comb_index;
    // Hangul vowel and trailing jamo compose algorithmically and carry no mark.
    if (p->comb_index != 0xFFFF && (p->comb_index & 0x8000)) return true;
    if ((cp >= 0x1161 && cp <= 0x1175) || (cp >= 0x11A8 && cp <= 0x11C2)) return true;
    // A canonical decomposition that NFC does not put back: singletons, exclusions.
    if (p->decomp_seqindex != 0xFFFF && p->decomp_type == 0) {
      std::string one;
      utf8::append(one, cp);
      auto* out = utf8proc_NFC(reinterpret_cast<const utf8proc_uint8_t*>(one.c_str()));
      const bool same = out != nullptr && one == reinterpret_cast<const char*>(out);
      std::free(out);
      return !same;
    }
    return false;
  }

  std::vector<std::uint64_t> bits_;
};

const nfc_unsafe_set& unsafe_set() {
  static const nfc_unsafe_set s;
  return s;
}

}  // namespace

normalizer normalizer::nfc() {
  normalizer n;
  n.nfc_ = true;
  return n;
}

bool nfc_quick_check(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    // Everything below U+0300 is safe: one- and two-byte sequences led by C0..CB.
    if (b < 0xCC) {
      i += utf8::sequence_length(b);
      continue;
    }
    if (unsafe_set().contains(utf8::decode(s, i))) return false;
  }
  return true;
}

std::string_view normalizer::apply(std::string_view in, std::string& buffer) const {
  if (!nfc_ || nfc_quick_check(in)) return in;
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(in.data()),
                   static_cast<utf8proc_ssize_t>(in.size()), &out,
                   static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (n < 0) return in;  // cannot happen for valid UTF-8; leaving the text as is is safe
  buffer.assign(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
  std::free(out);
  return buffer;
}

}  // namespace courier::text
