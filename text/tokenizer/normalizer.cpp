#include "text/tokenizer/normalizer.hpp"

#include <utf8proc.h>

#include <cstdint>
#include <cstdlib>
#include <string>
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

const nfc_unsafe_set& nfc_unsafe() {
  static const nfc_unsafe_set s;
  return s;
}

// Appends NFC(`in`) (valid UTF-8) to `out`.
void append_nfc(std::string_view in, std::string& out) {
  utf8proc_uint8_t* result = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(in.data()),
                   static_cast<utf8proc_ssize_t>(in.size()), &result,
                   static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (n < 0) {
    out.append(in);  // cannot happen for valid UTF-8; keeping the text as is is safe
  } else {
    out.append(reinterpret_cast<const char*>(result), static_cast<std::size_t>(n));
  }
  std::free(result);
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
    if (nfc_unsafe().contains(utf8::decode(s, i))) return false;
  }
  return true;
}

std::string_view normalizer::apply(std::string_view in, std::string& buffer) const {
  if (!nfc_) return in;
  // A safe code point is a normalization boundary: NFC never composes across the start of one,
  // nor reorders marks across it. So only the runs from the last safe code point before an
  // unsafe one to the next safe code point after it need utf8proc; the rest is copied.
  const nfc_unsafe_set& unsafe = nfc_unsafe();
  std::size_t i = 0, boundary = 0, copied = 0;
  bool changed = false;
  while (i < in.size()) {
    const auto b = static_cast<unsigned char>(in[i]);
    if (b < 0xCC) {
      boundary = i;
      i += utf8::sequence_length(b);
      continue;
    }
    const std::size_t start = i;
    if (!unsafe.contains(utf8::decode(in, i))) {
      boundary = start;
      continue;
    }
    while (i < in.size() && static_cast<unsigned char>(in[i]) >= 0xCC) {
      std::size_t next = i;
      if (!unsafe.contains(utf8::decode(in, next))) break;
      i = next;
    }
    if (!changed) buffer.clear();
    changed = true;
    buffer.append(in.data() + copied, boundary - copied);
    append_nfc(in.substr(boundary, i - boundary), buffer);
    copied = boundary = i;
  }
  if (!changed) return in;
  buffer.append(in.data() + copied, in.size() - copied);
  return buffer;
}

}  // namespace courier::text
